"""DataStream: the fluent API that builds a JobGraph, one operator per call.

Nothing runs until the environment executes; each method appends an OperatorSpec and an edge and
returns the new stream. Expressions may be SQL strings or columns from runtime.api.functions;
Python functions are vectorised (they receive and return pandas DataFrames, or Arrow tables with
``batch_format="arrow"``) and run inside Spark on the TaskManagers.
"""
from __future__ import annotations

from typing import Any, Protocol
from collections.abc import Callable

from runtime.api.functions import expression_sql
from runtime.api.process import KeyedProcessFunction, process_params
from runtime.api.windows import (Aggregate, EventTimeSessionWindows, SlidingEventTimeWindows,
                                 TumblingEventTimeWindows, WatermarkStrategy, aggregate_params)
from runtime.connectors.base import SinkWriter, connector_options
from runtime.connectors.collect import collect_params
from runtime.connectors.files import file_sink_params
from runtime.connectors.simple_sinks import blackhole_params, print_params
from runtime.ddl import arrow_schema
from runtime.jobgraph import OperatorSpec, pack_udf

class StreamBuilder(Protocol):
    """What a DataStream asks of the environment whose job graph it grows (runtime.api.environment's
    StreamExecutionEnvironment; the SQL layer's translator uses the same calls)."""

    pending_partitioning: dict[str, tuple[str, list[str]]]  # operator id -> partitioning of its next edge

    def add_operator(self, kind: str, name: str, params: dict, udf: str | None) -> OperatorSpec: ...

    def add_edge(self, source: OperatorSpec, target: OperatorSpec, partitioning: str | None,
                 keys: list[str]) -> None: ...

    def rename_operator(self, op: OperatorSpec, uid: str) -> None:
        """ValueError if another operator has ``uid``."""
        ...

    def execute_async(self, job_name: str = ...) -> Any: ...


class DataStream:
    """A stream of rows being defined: each method adds an operator to the job graph and returns the new stream."""
    def __init__(self, env: StreamBuilder, op: OperatorSpec, timestamp_column: str | None = None):
        self.env = env
        self.op = op
        self.timestamp_column = timestamp_column  # event time, once a watermark strategy assigned it

    def __repr__(self) -> str:
        return f"DataStream<{self.op.name}>"

    # -- settings on the last operator --------------------------------------------------------
    def set_parallelism(self, parallelism: int) -> DataStream:
        if not isinstance(parallelism, int) or parallelism < 1:
            raise ValueError(f"parallelism of '{self.op.name}' must be a positive integer, got {parallelism!r}")
        self.op.parallelism = parallelism
        return self

    def name(self, name: str) -> DataStream:
        self.op.name = name
        return self

    def uid(self, uid: str) -> DataStream:
        """A stable id for the operator, so savepoint state finds it after the program changes."""
        self.env.rename_operator(self.op, uid)
        return self

    def disable_chaining(self) -> DataStream:
        self.op.params["disable_chaining"] = True
        return self

    # -- transformations ----------------------------------------------------------------------
    def _then(self, kind: str, name: str, params: dict | None = None, fn: Callable | None = None,
              partitioning: str | None = None, keys: list[str] | None = None) -> DataStream:
        op = self.env.add_operator(kind, name, params or {}, pack_udf(fn) if fn is not None else None)
        self.env.add_edge(self.op, op, partitioning, keys or [])
        return DataStream(self.env, op, self.timestamp_column)

    # -- event time ---------------------------------------------------------------------------
    def assign_timestamps_and_watermarks(self, strategy: WatermarkStrategy) -> DataStream:
        """Take event time from a TIMESTAMP column and make watermarks that trail it (Flink's name)."""
        if not isinstance(strategy, WatermarkStrategy):
            raise TypeError("assign_timestamps_and_watermarks takes a WatermarkStrategy, e.g. "
                            "WatermarkStrategy.for_bounded_out_of_orderness('1 s').with_timestamp_column('ts')")
        out = self._then("watermark", "Timestamps/Watermarks", strategy.params())
        out.timestamp_column = strategy.timestamp_column
        return out

    def union(self, *others: DataStream) -> DataStream:
        """One stream of the rows of this and ``others`` (same columns); watermarks are the minimum."""
        if not others or not all(isinstance(o, DataStream) and o.env is self.env for o in others):
            raise TypeError("union takes one or more DataStreams of the same environment")
        op = self.env.add_operator("union", "Union", {}, None)
        for stream in (self, *others):
            self.env.add_edge(stream.op, op, None, [])
        return DataStream(self.env, op, self.timestamp_column)

    def filter(self, condition: Any) -> DataStream:
        """Keep rows where ``condition`` holds: a SQL string, a column, or a function pandas -> bool Series."""
        if callable(condition) and not _is_column(condition):
            return self._then("filter", "Filter", {}, condition)
        return self._then("filter", "Filter", {"condition": expression_sql(condition, "filter")})

    where = filter

    def select(self, *exprs: Any) -> DataStream:
        """Project columns: names, SQL expressions (``"amount * 2 AS double"``) or columns."""
        if not exprs:
            raise TypeError("select needs at least one column")
        return self._then("select", "Select", {"exprs": [expression_sql(e, "select") for e in exprs]})

    def with_columns(self, **columns: Any) -> DataStream:
        if not columns:
            raise TypeError("with_columns needs at least one name=expression")
        return self._then("with_columns", "WithColumns",
                          {"columns": {n: expression_sql(e, f"with_columns({n})") for n, e in columns.items()}})

    def map(self, fn: Callable | Any, schema: str | None = None, batch_format: str = "pandas") -> DataStream:
        """Apply ``fn`` to each batch; ``schema`` (DDL) names what it returns, or it is learnt from a sample.

        A column expression or SQL string instead of a function makes this a ``select`` of that expression.
        """
        if not callable(fn) or _is_column(fn):
            return self.select(fn)
        _check_batch_format(batch_format)
        return self._then("map", "Map", {"schema": schema, "batch_format": batch_format}, fn)

    def flat_map(self, fn: Callable, schema: str | None = None, batch_format: str = "pandas") -> DataStream:
        """Like map, but ``fn`` may return any number of rows per input batch."""
        _check_batch_format(batch_format)
        return self._then("flat_map", "FlatMap", {"schema": schema, "batch_format": batch_format}, fn)

    def process(self, fn: KeyedProcessFunction, schema: str | None = None) -> DataStream:
        raise TypeError("process(...) runs a KeyedProcessFunction on a keyed stream: call key_by(...) first, "
                        "e.g. stream.key_by(\"user\").process(fn, schema=\"user BIGINT, n BIGINT\")")

    def key_by(self, *keys: str) -> KeyedStream:
        if not keys or not all(isinstance(k, str) and k for k in keys):
            raise TypeError("key_by takes one or more column names")
        return KeyedStream(self, list(keys))

    def rebalance(self) -> PartitionedStream:
        return PartitionedStream(self, "rebalance")

    def broadcast(self) -> PartitionedStream:
        return PartitionedStream(self, "broadcast")

    def forward(self) -> PartitionedStream:
        return PartitionedStream(self, "forward")

    # -- sinks --------------------------------------------------------------------------------
    def sink_to(self, params: dict | type, name: str | None = None, **options) -> DataStreamSink:
        """Into a sink from connector options (``print_params()``) or a user-written SinkWriter class."""
        params, label = connector_options(params, SinkWriter, "print_params()", **options)
        op = self._then("sink", name or f"Sink: {label}", params)
        return DataStreamSink(op)

    def collect(self, name: str = "Collect") -> DataStreamSink:
        """Send the rows back to this client; read them from the JobClient after execute_async()."""
        return self.sink_to(collect_params(), name)

    def write_parquet(self, path: str, partition_by: list[str] | None = None) -> DataStreamSink:
        """Parquet files under ``path``; exactly-once (published per completed checkpoint) with checkpointing."""
        return self.sink_to(file_sink_params(path, partition_by), "Sink: parquet files")

    def print(self, prefix: str = "") -> DataStreamSink:
        return self.sink_to(print_params(prefix), "Print")

    def blackhole(self) -> DataStreamSink:
        return self.sink_to(blackhole_params(), "Blackhole")

    def execute_and_collect(self, job_name: str = "collect", timeout: float | None = None):
        """Run the job to the end and return the collected rows as a pyarrow Table."""
        self.collect()
        return self.env.execute_async(job_name).results(timeout)


class PartitionedStream:
    """A stream whose next operator is fed through an explicit partitioning."""

    def __init__(self, stream: DataStream, partitioning: str, keys: list[str] | None = None):
        self._stream = stream
        self._partitioning = partitioning
        self._keys = keys or []

    def __getattr__(self, name: str):
        method = getattr(DataStream, name)
        pending = (self._partitioning, self._keys)

        def call(*args, **kwargs):
            self._stream.env.pending_partitioning[self._stream.op.id] = pending
            return method(self._stream, *args, **kwargs)
        return call


class KeyedStream(PartitionedStream):
    """A stream partitioned by key: rows with the same key go to the same subtask (hash by key group)."""

    def __init__(self, stream: DataStream, keys: list[str]):
        super().__init__(stream, "hash", keys)

    @property
    def keys(self) -> list[str]:
        return list(self._keys)

    def window(self, assigner) -> WindowedStream:
        if not isinstance(assigner, (TumblingEventTimeWindows, SlidingEventTimeWindows, EventTimeSessionWindows)):
            raise TypeError("window takes TumblingEventTimeWindows.of(...), SlidingEventTimeWindows.of(...) "
                            "or EventTimeSessionWindows.with_gap(...)")
        return WindowedStream(self._stream, self.keys, assigner)

    def process(self, fn: KeyedProcessFunction, schema: str | None = None) -> DataStream:
        """Run ``fn`` on every row with its key's state and timers; ``schema`` (DDL) types the rows it emits.

        See runtime.api.process. The output keeps the input's event-time column only if ``schema``
        declares a column of that name (the function then sets it).
        """
        stream = self._stream
        params = process_params(fn, schema, self.keys, stream.timestamp_column)
        out = stream._then("keyed_process", f"KeyedProcess({type(fn).__name__})", params, fn,
                           partitioning="hash", keys=self.keys)
        if stream.timestamp_column not in arrow_schema(schema).names:
            out.timestamp_column = None
        return out


class WindowedStream:
    """``key_by(...).window(...)``: aggregate each key's rows per event-time window."""

    def __init__(self, stream: DataStream, keys: list[str], assigner):
        self._stream = stream
        self._keys = keys
        self._assigner = assigner
        self._lateness_us = 0

    def allowed_lateness(self, lateness: Any) -> WindowedStream:
        """Keep windows this long past the watermark; late rows within it update (and re-fire) the window."""
        from runtime.api.windows import _micros

        self._lateness_us = _micros(lateness, "allowed lateness")
        return self

    def aggregate(self, **aggregates: Aggregate) -> DataStream:
        """``count=agg.count(), total=agg.sum("amount")``: one row per key and window, with window_start/end."""
        stream = self._stream
        if stream.timestamp_column is None:
            raise ValueError("windows need event time: call assign_timestamps_and_watermarks(...) on the stream "
                             "before key_by(...).window(...)")
        specs, udfs = aggregate_params(aggregates)
        params = {"keys": self._keys, "window": self._assigner.params(), "aggregates": specs,
                  "ts_column": stream.timestamp_column, "allowed_lateness_us": self._lateness_us}
        combine = stream.forward()._then("window_combine", "WindowPreAggregate", {**params, "follows_input": True})
        window = combine._then("window_aggregate", f"Window({self._assigner.params()['type']})", params,
                               udfs or None, partitioning="hash", keys=self._keys)
        window.timestamp_column = None  # results carry window_start/window_end, not the input's time
        return window


class DataStreamSink:
    """The end of a stream: where its rows go (a sink operator), with the sink's name and parallelism."""
    def __init__(self, stream: DataStream):
        self._stream = stream
        self.op = stream.op

    def set_parallelism(self, parallelism: int) -> DataStreamSink:
        self._stream.set_parallelism(parallelism)
        return self

    def name(self, name: str) -> DataStreamSink:
        self.op.name = name
        return self

    def uid(self, uid: str) -> DataStreamSink:
        self._stream.uid(uid)
        return self


def _is_column(value: Any) -> bool:
    return type(value).__name__ == "Column"


def _check_batch_format(batch_format: str) -> None:
    if batch_format not in ("pandas", "arrow"):
        raise ValueError(f"batch_format must be 'pandas' or 'arrow', got {batch_format!r}")
