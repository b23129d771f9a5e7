"""Keeping pandas out of a TaskManager process: the calls into PySpark and pyarrow that would load it, made without it.

A TaskManager needs pandas for nothing of its own (its window state is Arrow; only jobs with pandas
functions use it), and pandas costs about 40 MB resident per TaskManager process. Yet PySpark and pyarrow
load it:

- ``createDataFrame`` imports pandas on every call, whatever it is given (to test whether its input is a
  pandas DataFrame), and asks the JVM for eight settings. On a classic session (local, or a Spark cluster's
  driver) :func:`frame_from_arrow` sends a table to the JVM the way ``createDataFrame`` does, through the
  session's ``_create_from_arrow_table``, with the session's Arrow settings read once; a Spark Connect
  session, or a PySpark whose method has another shape than the one known here, takes the public route.
- pyarrow and PySpark both import pandas merely to learn whether a value is a pandas object (pyarrow on
  its first conversion of any Python value, PySpark's ``functions.lit`` and py4j converters through
  ``pyspark.testing.utils``). :func:`settle_without_pandas` lets them learn at start that it is not loaded.
"""
from __future__ import annotations

import importlib.abc
import inspect
import sys
import weakref

import pyarrow as pa

from runtime.config import Configuration

_DIRECT_PARAMETERS = ("table", "schema", "timezone", "prefer_timestamp_ntz", "prefers_large_var_types",
                      "arrow_batch_size")
_routes: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # session -> (create, settings) or None
_collect_routes: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # session -> (large types, schemas) or None
_seqs: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # session -> {ids: (items, Java Seq)}
SCHEMAS_KEPT = 256  # entries of each per-session cache here (Arrow schemas, Java Seqs) before it starts afresh


def frame_from_arrow(session, table: pa.Table):
    """A DataFrame of ``table``'s rows, columns and Arrow types, on ``session``."""
    route = _direct_route(session)
    if route is None:
        return session.createDataFrame(table)
    create, settings = route
    return create(table, table.schema.names, *settings)


def schema_from_ddl(session, ddl: str):
    """A StructType from a DDL string like 'user INT, amount DOUBLE' (Spark's own parser); a single type
    ('INT') is one column named ``value``, as ``createDataFrame`` has it. Raises Spark's parse error."""
    if _direct_route(session) is None:
        return session.createDataFrame([], ddl).schema
    from pyspark.sql.types import DataType, StructType

    parsed = DataType.fromDDL(ddl)
    return parsed if isinstance(parsed, StructType) else StructType().add("value", parsed)


def _direct_route(session):
    """``(create, settings)`` for a classic session whose PySpark has the method as known here, else None."""
    try:
        return _routes[session]
    except KeyError:
        pass
    create = getattr(session, "_create_from_arrow_table", None)
    route = None
    if (create is not None and ".connect." not in type(session).__module__
            and tuple(inspect.signature(create).parameters) == _DIRECT_PARAMETERS):
        conf = session.conf
        route = (create, (conf.get("spark.sql.session.timeZone"),
                          conf.get("spark.sql.timestampType").upper() == "TIMESTAMP_NTZ",
                          conf.get("spark.sql.execution.arrow.useLargeVarTypes").lower() == "true",
                          int(conf.get("spark.sql.execution.arrow.maxRecordsPerBatch"))))
    _routes[session] = route
    return route


def table_of(df) -> pa.Table:
    """``df.toArrow()``: the DataFrame's rows in one Arrow table, cast to the Arrow types of its Spark schema.

    ``toArrow`` makes 17 round trips to the JVM besides the action (two settings, the schema as JSON, call sites),
    each again for every bundle. On a classic session the action's own stream is read here as ``toArrow`` reads
    it, the settings once per session, and the schema to cast to once per Arrow schema the JVM sends (it sends
    the same types for the same Spark schema); only an empty result asks for the DataFrame's schema. A Spark
    Connect DataFrame, or a PySpark whose collection has another shape, takes the public route."""
    route = _collect_route(df)
    if route is None:
        return df.toArrow()
    from pyspark.errors.exceptions.captured import unwrap_spark_exception
    from pyspark.sql.pandas.serializers import ArrowCollectSerializer
    from pyspark.util import _load_from_socket

    large_types, schemas = route
    served = df._jdf.collectAsArrowToPython()  # a Java array: indexed, one round trip each (unpacked, eight)
    port, secret, server = served[0], served[1], served[2]
    try:
        with _load_from_socket((port, secret), ArrowCollectSerializer()) as stream:
            batches = list(stream)
    finally:
        with unwrap_spark_exception():
            server.getResult()  # raises the action's error, as toArrow does
    if not batches:
        return _arrow_schema(df, large_types).empty_table()
    sent = batches[0].schema
    target = schemas.get(sent)
    if target is None:
        target = _keep(schemas, sent, _arrow_schema(df, large_types))
    return pa.Table.from_batches(batches).cast(target)


def _arrow_schema(df, large_types: bool) -> pa.Schema:
    from pyspark.sql.pandas.types import to_arrow_schema

    return to_arrow_schema(df.schema, error_on_duplicated_field_names_in_struct=True, timezone="UTC",
                           prefers_large_types=large_types)


def _collect_route(df):
    """``(large types, schema cache)`` for a classic session's DataFrame whose PySpark collects as known here."""
    session = _classic(df)
    if session is None:
        return None
    try:
        return _collect_routes[session]
    except KeyError:
        pass
    from pyspark.sql.pandas import conversion

    route = None
    known = ("collectAsArrowToPython" in inspect.getsource(conversion.PandasConversionMixin._collect_as_arrow))
    if known:
        route = (session.conf.get("spark.sql.execution.arrow.useLargeVarTypes").lower() == "true", {})
    _collect_routes[session] = route
    return route


def group_aggregate(df, keys: list, aggregates: list):
    """``df.groupBy(*keys).agg(*aggregates)``. PySpark hands a list of columns to the JVM one element a round trip
    (a clicks bundle's grouping took 13); on a classic session the JVM's lists of the same columns (the runner
    parses each expression once per session) are kept and handed over again."""
    if _classic(df) is None:
        return df.groupBy(*keys).agg(*aggregates)
    from pyspark.sql import DataFrame

    jdf = df._jdf.groupBy(_java_seq(df, keys)).agg(aggregates[0]._jc, _java_seq(df, aggregates[1:]))
    return DataFrame(jdf, df.sparkSession)


def with_columns(df, columns: dict):
    """``df.withColumns(columns)``, its lists kept as :func:`group_aggregate` keeps them."""
    if _classic(df) is None:
        return df.withColumns(columns)
    from pyspark.sql import DataFrame

    jdf = df._jdf.withColumns(_java_seq(df, list(columns)), _java_seq(df, list(columns.values())))
    return DataFrame(jdf, df.sparkSession)



def _classic(df):
    """``df``'s session if it is a classic one (the JVM's objects at hand), else None."""
    session = getattr(df, "sparkSession", None)
    if session is None or getattr(df, "_jdf", None) is None or ".connect." in type(session).__module__:
        return None
    return session


def _java_seq(df, items: list):
    """A Scala Seq of ``items`` (Columns or names) in ``df``'s JVM, made once per session for the same items."""
    from pyspark.sql.classic.column import _to_seq

    session = df.sparkSession
    kept = _seqs.setdefault(session, {})
    key = tuple(item if isinstance(item, str) else id(item) for item in items)
    found = kept.get(key)
    if found is not None and all(a is b for a, b in zip(found[0], items)):
        return found[1]
    seq = _to_seq(session.sparkContext, [item if isinstance(item, str) else item._jc for item in items])
    return _keep(kept, key, (tuple(items), seq))[1]  # the items held: their ids stay theirs


def _keep(cache: dict, key, value):
    """``cache[key] = value``, the cache started afresh once it holds SCHEMAS_KEPT entries; returns ``value``."""
    if len(cache) >= SCHEMAS_KEPT:
        cache.clear()
    cache[key] = value
    return value


def settle_without_pandas(conf: Configuration) -> None:
    """Let pyarrow and PySpark settle, with pandas made unimportable for a moment, that it is not loaded.

    Each asks once whether pandas is there before it treats a value as a pandas object, and imports it to
    answer: pyarrow on its first conversion of a Python value (``pa.array``, ``pa.scalar``, a compute
    function given a number), PySpark's ``functions.lit`` and py4j converters through
    ``pyspark.testing.utils``, which imports pandas to learn which of its tests could run. Settled here,
    pyarrow imports pandas only when a conversion to or from pandas needs it (``to_pandas``,
    ``from_pandas``: a job's pandas functions), as if pandas had been installed later; PySpark's testing
    module reports ``have_pandas`` False, which only PySpark's doctests read, and ``should_test_connect`` False,
    which PySpark's Spark Connect client reads (it needs pandas anyway): so nothing is done for a TaskManager
    with a Connect session. Call first thing in a process, before it starts threads: an import of pandas on
    another thread meanwhile would fail."""
    if "pandas" in sys.modules or conf.get("spark.remote"):
        return
    blocker = _PandasBlocker()
    sys.meta_path.insert(0, blocker)
    try:
        pa.array([0])  # pyarrow's one look for pandas
        import pyspark.testing.utils  # noqa: F401 - imported for its answers, cached
    finally:
        sys.meta_path.remove(blocker)


class _PandasBlocker(importlib.abc.MetaPathFinder):
    """An import finder that refuses pandas (None in sys.modules would do for Python's imports, not for
    pyarrow's compiled ones, which take the None for the module)."""
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] == "pandas":
            raise ModuleNotFoundError(f"{name} is kept unloaded for a moment", name=name)
        return None
