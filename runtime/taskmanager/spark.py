"""The Spark plans every task runs, on its TaskManager's Spark session.

Each TaskManager owns one session (runtime.taskmanager.spark_session: ``local[<slots>]``, a Spark
cluster's driver, or a Spark Connect session; replaced when unhealthy). The plans here use only the
DataFrame API that classic and Spark Connect sessions share (no RDDs, no JVM handles), and the Python
they hand to Spark (runtime.taskmanager.spark_functions) travels by value, so they run the same on
both. Tasks call into :class:`SparkRunner` from executor threads: every method here blocks and must
not run on the TaskManager's event loop.

Data moves in bundles: a source reads a bounded offset range natively in Spark (``spark.range`` plus
deterministic hash expressions for datagen: runtime.taskmanager.datagen_sql), the chained operators extend
that plan, and rows leave Spark once per bundle as Arrow.
"""
from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

import pyarrow as pa

from runtime import errors
from runtime.config import Configuration
from runtime.taskmanager.lean_pyspark import frame_from_arrow, group_aggregate, schema_from_ddl, table_of, with_columns
from runtime.taskmanager.datagen_sql import generate
from runtime.taskmanager.driver_time import driver_seconds
from runtime.taskmanager.spark_functions import arrow_filter, arrow_mapper, as_arrow, pandas_mapper
from runtime.taskmanager.spark_session import SparkSessionKeeper

log = logging.getLogger(__name__)

EXPR_CACHE_SIZE = 4096  # parsed expressions kept per session (SparkRunner.expr); a few per operator of each job


class SparkRunner:
    """A TaskManager's Spark session and the plans its tasks run on it (the one place pyspark is used)."""
    def __init__(self, conf: Configuration, slots: int, app_name: str = "flinkbench-taskmanager",
                 keeper: SparkSessionKeeper | None = None):
        self.keeper = keeper or SparkSessionKeeper(conf, slots, app_name)
        self._schemas: dict[str, Any] = {}
        self._exprs: tuple[Any, dict[str, Any]] = (None, {})  # (the session they were parsed for, SQL -> Column)
        self._shipping = threading.Lock()  # tasks ship their jobs' Python dependencies from several threads

    # -- session ------------------------------------------------------------------------------
    @property
    def master(self) -> str:
        return self.keeper.master

    @property
    def session(self):
        """The TaskManager's session; a fresh one (and JVM) if the old one became unhealthy."""
        return self.keeper.session()

    def stop(self) -> None:
        self.keeper.stop()

    def task_failed(self) -> None:
        """A task failed, perhaps of its session (a stopped context): the session is checked at its next use."""
        self.keeper.recheck()

    def save_class_archive(self) -> bool:
        """Write the machine's Spark class archive from this session's JVM if it has none yet
        (runtime.taskmanager.class_archive); call on a warmed session while no task runs."""
        return self.keeper.save_class_archive()

    def expr(self, sql: str):
        """``F.expr(sql)``, parsed once per session and reused by every bundle's plan.

        A column built through ``pyspark.sql.functions`` costs two JVM round trips (lookup, call): a clicks
        bundle's plan took 86 round trips, 46 with expressions parsed once. They are immutable and unresolved
        (each plan resolves them anew; nondeterministic functions draw seeds then), so one serves every plan."""
        from pyspark.sql import functions as F

        return self._column(sql, lambda: F.expr(sql))

    def _column(self, key, make: Callable):
        """The column ``make()`` builds, built once per session under ``key`` (see :meth:`expr`)."""
        session = self.session
        owner, cache = self._exprs
        if owner is not session or len(cache) > EXPR_CACHE_SIZE:
            owner, cache = self._exprs = (session, {})
        column = cache.get(key)
        if column is None:
            column = cache[key] = make()
        return column

    def _keep_where(self, df, keep: str, condition: str):
        """A filter folded into a pre-aggregate (runtime.taskmanager.chain.fold_watermark): ``df`` with the boolean
        column ``keep`` still true only where ``condition`` holds. A condition Spark refuses is refused as an
        unfolded filter would be, so its error names the user's expression rather than the flag."""
        from pyspark.sql import functions as F

        flag = self._column(("keep", keep, condition),
                            lambda: F.coalesce(F.col(keep) & self.expr(condition), F.lit(False)))
        try:
            return df.withColumn(keep, flag)
        except Exception:  # noqa: BLE001 - the unfolded filter's own error, where it has one
            df.filter(self.expr(condition))
            raise

    def with_column(self, df, name: str, sql: str):
        """``df`` with column ``name`` set to the SQL expression ``sql``."""
        return df.withColumn(name, self.expr(sql))

    # -- moving data in and out ---------------------------------------------------------------
    def from_arrow(self, table: pa.Table):
        return frame_from_arrow(self.session, table)

    def to_arrow(self, df) -> pa.Table:
        """The bundle's one action; an OutOfMemoryError counts against the session's health."""
        try:
            return table_of(df)
        except Exception as err:  # noqa: BLE001 - counted, then raised as it was
            self.keeper.note_failure(err)
            raise

    def driver_seconds(self, df) -> float:
        """Seconds ``df``'s query spent on the driver before any stage (runtime.taskmanager.driver_time)."""
        return driver_seconds(df)

    def parse_schema(self, ddl: str):
        """A Spark StructType from a DDL string like 'user INT, amount DOUBLE' (Spark's own parser, through
        the session, once per string); ValueError if it does not parse."""
        schema = self._schemas.get(ddl)
        if schema is None:
            try:
                schema = schema_from_ddl(self.session, ddl)
            except Exception as err:  # noqa: BLE001 - Spark raises several parse error types
                raise ValueError(f"schema {ddl!r} does not parse: {_first_line(err)}") from None
            if not schema.fields:
                raise ValueError(f"schema {ddl!r} declares no columns")
            self._schemas[ddl] = schema
        return schema

    # -- sources ------------------------------------------------------------------------------
    def datagen_ranges(self, params: dict, ranges: list[tuple[int, int, int]]):
        return generate(self.session, self.parse_schema(params["schema"]), params, ranges)

    def ship_python_environment(self, environment) -> None:
        """Hand Spark the folders of a job's Python dependencies (runtime.taskmanager.python_environment), once per
        session: archives Spark unpacks where its workers run, on a Spark cluster too. ValueError on Spark Connect,
        whose sessions take no archives here."""
        with self._shipping:
            shipped = self._column("python environments", set)
            for path, alias in environment.spark_archives:
                if alias in shipped:
                    continue
                if self.keeper.remote:
                    raise ValueError("a job that ships Python dependencies (python.files, python.archives, "
                                     "python.requirements) cannot run on a Spark Connect session (spark.remote)")
                self.session.sparkContext.addArchive(f"{path}#{alias}")
                shipped.add(alias)

    # -- stateless operators ------------------------------------------------------------------
    def apply(self, df, kind: str, params: dict, fn: Callable | None = None):
        """Extend the plan of ``df`` with one stateless operator. Raises ValueError on bad expressions."""
        try:
            if isinstance(fn, dict) and kind in ("select", "filter"):  # SQL's Python scalar functions, by name
                from runtime.taskmanager.spark_udf_plans import register_scalar_functions

                register_scalar_functions(self.session, fn, self._column("registered functions", set))
                fn = None
            if kind == "select":
                return df.selectExpr(*params["exprs"])
            if kind == "filter" and fn is None and params.get("into"):
                return self._keep_where(df, params["into"], params["condition"])
            if kind == "filter" and fn is None:
                return df.filter(self.expr(params["condition"]))
            if kind == "with_columns":
                return df.withColumns({name: self.expr(e) for name, e in params["columns"].items()})
            if kind == "filter":
                return df.mapInArrow(arrow_filter(fn), df.schema)
            if kind in ("map", "flat_map"):
                return self._map_python(df, fn, params)
            if kind == "window_combine":
                return window_combine(df, params, self.expr, fn)
            if kind == "local_aggregate":
                from runtime.taskmanager.spark_aggregates import local_aggregate

                return local_aggregate(df, params, fn)
            if kind == "table_function":
                from runtime.taskmanager.spark_udf_plans import table_function

                return table_function(df, params, fn, self.expr)
            if kind in ("watermark", "union"):
                return df
        except Exception as err:  # noqa: BLE001 - AnalysisException and friends
            if _is_analysis_error(err):
                raise ValueError(_first_line(err)) from None
            raise
        raise ValueError(f"operator kind {kind!r} does not run as a stateless Spark transformation")

    def observe_max_micros(self, df, column: str):
        """``df`` plus an Observation of its largest ``column`` in microseconds, read after the bundle's action."""
        import uuid

        from pyspark.sql import Observation

        observation = Observation(f"wm-{uuid.uuid4().hex}")
        max_us = self.expr(f"max(unix_micros({quoted(column)})) AS max_us")
        return _naming_timestamp(df, column, lambda: df.observe(observation, max_us)), observation

    def mark_event_time(self, df, params: dict):
        """``df`` with the watermark's event time in microseconds as column ``params["event_column"]`` (and
        ``params["keep_column"]`` true, for the filters folded after it), for a pre-aggregate to take the maximum of
        (runtime.taskmanager.chain.fold_watermark)."""
        columns = {params["event_column"]: self.expr(f"unix_micros({quoted(params['ts_column'])})")}
        if params.get("keep_column"):
            columns[params["keep_column"]] = self.expr("true")
        return _naming_timestamp(df, params["ts_column"], lambda: with_columns(df, columns))

    def _map_python(self, df, fn: Callable, params: dict):
        batch_format = params.get("batch_format", "pandas")
        schema = params.get("schema")
        if schema:
            out_schema = self.parse_schema(schema)
        else:
            out_schema = self._infer_output_schema(df, fn, batch_format)
        wrapped = pandas_mapper(fn, out_schema.fieldNames()) if batch_format == "pandas" else arrow_mapper(fn)
        return df.mapInArrow(wrapped, out_schema)

    def _infer_output_schema(self, df, fn: Callable, batch_format: str):
        """Run ``fn`` on a few rows to learn what it returns (once per task; the caller caches the plan)."""
        from pyspark.sql.pandas.types import from_arrow_schema

        sample = self.to_arrow(df.limit(16))
        result = _call_user(fn, sample.to_pandas() if batch_format == "pandas" else sample)
        table = as_arrow(result, None)
        return from_arrow_schema(table.schema)


def window_combine(df, params: dict, expr: Callable | None = None, udafs: dict | None = None):
    """Assign rows to event-time windows and pre-aggregate them per (key, window) before the exchange.

    The output columns are what runtime.taskmanager.window_operator merges: the keys, the window start
    (microseconds), ``__records`` and one partial column per aggregate; or, for session windows and
    user-defined aggregates, the raw rows with their window start / event time. ``expr`` parses SQL into
    a column (SparkRunner.expr reuses them across bundles). A missing column is named (missing_columns).
    SQL's Python aggregate functions (``udafs`` by aggregate name) accumulate each group's rows into a partial
    accumulator here (runtime.taskmanager.spark_udf_plans).
    """
    from pyspark.sql import functions as F

    from runtime.taskmanager.spark_udf_plans import accumulated, with_order
    from runtime.taskmanager.window_operator import needs_raw_rows, partial_columns

    expr = expr or F.expr
    aggregates = params["aggregates"]
    try:
        if needs_raw_rows(params["window"], aggregates):
            return _window_combine(df, params, expr)
        grouped = _window_combine(with_order(df, aggregates), params, expr)
        return accumulated(grouped, aggregates, udafs or {}, lambda spec: next(iter(partial_columns(spec))))
    except Exception as err:  # noqa: BLE001 - the missing columns named; anything else raised as it was
        wanted = params["keys"] + [params["ts_column"]] + [a["column"] for a in params["aggregates"] if a.get("column")]
        missing = sorted(missing_columns(err, df, wanted))
        if missing:
            raise ValueError(f"no column {missing}; available: {df.columns}") from None
        raise


def _window_combine(df, params: dict, expr: Callable):
    from pyspark.sql import functions as F

    from runtime.taskmanager.window_operator import EVENT_TIME, WINDOW_END, WINDOW_START, needs_raw_rows

    keys, window, aggregates, ts = params["keys"], params["window"], params["aggregates"], params["ts_column"]
    ts_us = f"unix_micros({quoted(ts)})"
    if pre_aggregates(params):  # the hot path: one grouping, no added columns
        start = expr(f"{ts_us} - pmod({ts_us}, {window['slide_us']}L) AS {WINDOW_START}")
        partials = _partials(aggregates, expr, params.get("keep_column"))
        if params.get("event_column"):  # the watermark's part (runtime.taskmanager.chain.fold_watermark)
            partials.append(expr(f"max({quoted(params['event_column'])}) AS {quoted(params['event_column'])}"))
        return group_aggregate(df, [*[expr(quoted(k)) for k in keys], start], partials)
    df = df.withColumn(EVENT_TIME, expr(ts_us))
    if window["type"] == "cumulate":
        from runtime.taskmanager.spark_aggregates import cumulate_windows

        df = cumulate_windows(df, window)
    elif window["type"] != "session":
        slide, per_row = window["slide_us"], window["size_us"] // window["slide_us"]
        last_start = F.col(EVENT_TIME) - F.expr(f"pmod({EVENT_TIME}, {slide}L)")
        if per_row == 1:
            df = df.withColumn(WINDOW_START, last_start)
        else:  # one row per window the row falls in (size / slide of them)
            offsets = F.expr(f"transform(sequence(0, {per_row - 1}), k -> CAST(k AS BIGINT) * {slide}L)")
            df = df.withColumn(WINDOW_START, F.explode(offsets)).withColumn(WINDOW_START, last_start - F.col(WINDOW_START))
    if needs_raw_rows(window, aggregates):
        values = sorted({c for a in aggregates for c in [a.get("column"), *a.get("args", [])] if c} - set(keys))
        cols = keys + [c for c in (WINDOW_START, WINDOW_END) if c in df.columns] + [EVENT_TIME] + values
        return df.select(*[F.col(quoted(c)) for c in cols])
    bounds = [F.col(WINDOW_START)] + ([F.col(WINDOW_END)] if window["type"] == "cumulate" else [])
    return df.groupBy(*[F.col(quoted(k)) for k in keys], *bounds).agg(*_partials(aggregates, expr))


def pre_aggregates(params: dict) -> bool:
    """Whether :func:`window_combine` groups rows by (key, window) into partials without added columns: a window
    per row (tumbling, or sliding by its size) and aggregates that merge from partials."""
    from runtime.taskmanager.window_operator import needs_raw_rows

    window = params["window"]
    one_window_a_row = window["type"] in ("tumbling", "sliding") and window["size_us"] == window["slide_us"]
    return one_window_a_row and not needs_raw_rows(window, params["aggregates"])


def _partials(aggregates: list[dict], expr: Callable, keep: str | None = None) -> list:
    """The partial aggregates of a (key, window) group, named as runtime.taskmanager.window_operator merges them;
    over the rows whose boolean column ``keep`` is true, if given (filters folded into the aggregate)."""
    from runtime.taskmanager.window_operator import RECORDS, partial_columns

    from runtime.taskmanager.spark_udf_plans import rows_of_group

    where = f" FILTER (WHERE {quoted(keep)})" if keep else ""
    out = [expr(f"count(1){where} AS {RECORDS}")]
    for spec in aggregates:
        column = quoted(spec["column"]) if spec.get("column") else None
        for name in partial_columns(spec):
            if spec["fn"] == "udaf":  # its rows, accumulated after the grouping (spark_udf_plans.accumulated)
                out.append(expr(f"{rows_of_group(spec, where)} AS {quoted(name)}"))
            elif spec["fn"] == "count":
                out.append(expr(f"count(1){where} AS {quoted(name)}"))
            elif name.endswith("_cnt"):
                out.append(expr(f"count({column}){where} AS {quoted(name)}"))
            else:
                fn = "sum" if spec["fn"] == "avg" else spec["fn"]  # sum, min or max (avg: its sum half)
                out.append(expr(f"{fn}({column}){where} AS {quoted(name)}"))
    return out


def missing_columns(err: BaseException, df, wanted: list[str]) -> list[str]:
    """The ``wanted`` columns ``df`` lacks when ``err`` is Spark refusing a plan over it, else []: asked only
    after a failure, as a plan's columns are a round trip to the JVM, too dear for every bundle."""
    if not _is_analysis_error(err):
        return []
    there = set(df.columns)
    return list(dict.fromkeys(c for c in wanted if c not in there))


def _naming_timestamp(df, column: str, plan: Callable):
    """``plan()``, a plan reading the timestamp ``column`` of ``df``; its absence named if Spark refuses it."""
    try:
        return plan()
    except Exception as err:  # noqa: BLE001 - the column's absence named; anything else raised as it was
        if missing_columns(err, df, [column]):
            raise ValueError(f"no timestamp column {column!r}; available: {df.columns}") from None
        raise


def quoted(name: str) -> str:
    """A column name as a SQL identifier."""
    return f"`{name.replace('`', '``')}`"


def _is_analysis_error(err: BaseException) -> bool:
    return type(err).__name__ in ("AnalysisException", "ParseException", "IllegalArgumentException")


def _first_line(err: BaseException) -> str:
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__


class UserFunctionError(errors.UserFunctionError):
    """A user function raised; carries its traceback so the job's exception history shows the user's line."""

    def __init__(self, fn: Callable, err: BaseException):
        name = getattr(fn, "__qualname__", repr(fn))
        super().__init__(f"user function {name} raised:\n{errors.format_traceback(err)}")


def _call_user(fn: Callable, batch):
    try:
        return fn(batch)
    except Exception as err:  # noqa: BLE001 - any user error, reported with its traceback
        raise UserFunctionError(fn, err) from None
