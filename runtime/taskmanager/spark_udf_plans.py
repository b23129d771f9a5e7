"""Spark plans of SQL's Python functions, on a TaskManager's Spark session (the bodies that run in Spark's
Python workers are runtime.taskmanager.spark_udfs).

* Scalar functions are registered in the session as Arrow UDFs under the names the plan calls them by
  (runtime.sql.user_functions gives each function body its own), once per session.
* A table function (a Correlate) is a ``mapInArrow`` over its input with its arguments computed first.
* An aggregate function's rows of one bundle are gathered per group in arrival order (``__ord``) and
  accumulated into one partial accumulator per group inside Spark: the keyed operator merges those into
  its state (runtime.taskmanager.udf_aggregates), so only one pickled accumulator per key and bundle
  leaves Spark.

Like runtime.taskmanager.spark, this runs on the task's executor thread.
"""
from __future__ import annotations

from collections.abc import Callable

ORDER = "__ord"
_ARGUMENT = "__targ"


def register_scalar_functions(session, functions: dict, registered: set) -> None:
    """Register ``functions`` ({name called: (wrapper, Spark result type, called without arguments)}) not yet
    in ``registered``."""
    from pyspark.sql.functions import arrow_udf
    from pyspark.sql.pandas.functions import ArrowUDFType

    from runtime.ddl import arrow_schema
    from runtime.taskmanager import spark_udfs

    for name, (wrapper, result_type, nullary) in functions.items():
        if name in registered:
            continue
        spark_udfs.ship_by_value()
        arrow_type = arrow_schema(f"v {result_type}").field(0).type
        body = spark_udfs.scalar(wrapper, arrow_type, nullary)
        session.udf.register(name, arrow_udf(body, result_type, ArrowUDFType.SCALAR))
        registered.add(name)


def table_function(df, params: dict, wrapper, expr: Callable):
    """Each row of ``df`` joined with the rows the table function gives for it (params: ``args``, Spark SQL of
    its arguments; ``fields``, the DDL of the columns it adds; ``outer``)."""
    from pyspark.sql.pandas.types import to_arrow_schema
    from pyspark.sql.types import StructType

    from runtime.taskmanager import spark_udfs

    spark_udfs.ship_by_value()
    added = StructType.fromDDL(params["fields"])
    out = StructType(list(df.schema.fields) + list(added.fields))
    args = [f"{_ARGUMENT}{i}" for i in range(len(params["args"]))]
    with_args = df.select("*", *[expr(f"{sql} AS {a}") for sql, a in zip(params["args"], args)])
    body = spark_udfs.table(wrapper, args, to_arrow_schema(out, timezone="UTC"), len(added.fields), bool(params.get("outer")),
                            len(df.columns))
    return with_args.mapInArrow(body, out)


def with_order(df, aggregates: list[dict]):
    """``df`` with each row's arrival order (``__ord``) when a Python aggregate will accumulate its rows."""
    from pyspark.sql import functions as F

    if not any(a["fn"] == "udaf" for a in aggregates):
        return df
    return df.withColumn(ORDER, F.monotonically_increasing_id())


def rows_of_group(spec: dict, where: str = "") -> str:
    """Spark SQL gathering a group's argument rows of a Python aggregate (with ``__op`` when the bundle is a
    changelog), sorted by arrival: what :func:`accumulated` turns into the partial accumulator."""
    fields = [f"'{ORDER}', {ORDER}"] + [f"'__a{i}', `{a.replace('`', '``')}`" for i, a in enumerate(spec["args"])]
    return f"sort_array(collect_list(named_struct({', '.join(fields)})){where})"


def accumulated(df, aggregates: list[dict], udafs: dict, partial_name: Callable[[dict], str]):
    """``df`` with each Python aggregate's gathered rows (column ``partial_name(spec)``) replaced by the partial
    accumulator they make, pickled."""
    from pyspark.sql.functions import arrow_udf, col
    from pyspark.sql.pandas.functions import ArrowUDFType

    from runtime.taskmanager import spark_udfs

    specs = [a for a in aggregates if a["fn"] == "udaf"]
    if not specs:
        return df
    spark_udfs.ship_by_value()
    columns = {}
    for spec in specs:
        name = partial_name(spec)
        body = spark_udfs.partial_accumulators(udafs[spec["name"]], [f"__a{i}" for i in range(len(spec["args"]))])
        columns[name] = arrow_udf(body, "binary", ArrowUDFType.SCALAR)(col(f"`{name}`"))
    return df.withColumns(columns)
