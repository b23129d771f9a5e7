"""Logical plans into operators of a StreamExecutionEnvironment: the physical plan, one method per node.

Scans become sources (plus computed columns and the watermark assigner), Calcs Spark selects and
filters (chained into their producer's Spark plan), aggregations a local pre-aggregation in Spark
followed by a keyed exchange and a stateful operator, and sinks the runtime's connectors. Every
operator's uid is derived from the plan (the node's description and its inputs'), so the same query
resumes from its own savepoints.
"""
from __future__ import annotations

import hashlib

from runtime.api.datastream import DataStream
from runtime.changelog import OP_COLUMN
from runtime.connectors.collect import collect_params
from runtime.connectors.table_options import SINK_PARALLELISM
from runtime.jobgraph import pack_udf
from runtime.sql import connectors, user_functions
from runtime.sql.catalog import StreamTable
from runtime.sql.logical import (Aggregate, Calc, Correlate, GroupAggregate, Join, LookupJoin, Node, Over, Rank, Scan,
                                 Sink, Sort, Union, Values, WindowAggregate, WindowTVF)
from runtime.sql.match_recognize import Match
from runtime.sql.temporal import TemporalJoin
from runtime.sql.scope import quoted


class Translator:
    """Turns logical plans into operators of one StreamExecutionEnvironment, with uids from the plan."""
    def __init__(self, env, runtime_mode: str = "streaming", catalog=None):
        self.env = env
        self.mode = runtime_mode
        # the catalog's Python functions by their Spark names (runtime.sql.user_functions)
        self.functions = user_functions.by_spark_name(catalog) if catalog is not None else {}
        self.digests: dict[int, str] = {}
        self.named: set[int] = set()  # operators already given a uid (by the node that made them)
        self.scans: dict[str, DataStream] = {}  # one source per table read, shared by every plan that reads it

    def translate(self, node: Node) -> DataStream:
        """The DataStream of ``node``'s output, its operators added to the environment."""
        method = getattr(self, f"_{type(node).__name__.lower()}", None)
        if method is None:
            raise NotImplementedError(f"no translation for {type(node).__name__}")
        before = len(self.env.operators)
        stream = method(node)
        self._name_operators(node, before)
        return stream

    def _name_operators(self, node: Node, before: int) -> None:
        """Give the operators this node added uids from the plan: the same query gets the same uids."""
        digest = hashlib.sha1(("|".join([node.describe()] + [self.digests.get(id(i), "") for i in node.inputs]))
                              .encode()).hexdigest()
        self.digests[id(node)] = digest
        mine = [op for op in self.env.operators[before:] if id(op) not in self.named]
        for n, op in enumerate(mine):
            self.named.add(id(op))
            uid = f"sql-{op.kind}-{digest[:10]}-{n}"
            if any(o.id == uid for o in self.env.operators if o is not op):
                uid = f"{uid}-{self.env._counter}"
            self.env.rename_operator(op, uid)

    # -- sources ----------------------------------------------------------------------------------
    def _scan(self, node: Scan) -> DataStream:
        """A table's source (with its computed columns and watermark); a table read again, by the same query or
        another INSERT of a statement set, reuses it, so the job reads each table once, as Flink reuses sources."""
        known = self.scans.get(node.describe())
        if known is None:
            known = self.scans[node.describe()] = self._source(node)
        return known

    def _source(self, node: Scan) -> DataStream:
        table = node.table
        if isinstance(table, StreamTable):
            from runtime.sql.streams import copy_into

            return copy_into(table.stream, self.env)
        stream = self.env.from_source(connectors.source_params(table, self.mode), name=f"Source: {table.name}")
        if node.changelog:  # one reader; each row's changes then stay on one subtask, in order
            stream.set_parallelism(1)
            exprs = [quoted(c.name) for c in table.physical] + [quoted(OP_COLUMN)]
            stream = stream._then("select", "Exchange(primary key)", {"exprs": exprs}, partitioning="hash",
                                  keys=list(table.primary_key))
        for column in table.columns:
            if column.expr is not None:
                stream = stream._then("with_columns", f"Computed({column.name})", {"columns": {column.name: column.expr}})
        if table.watermark is not None:
            wm = table.watermark
            stream = stream._then("watermark", f"WatermarkAssigner({wm.column})",
                                  {"ts_column": wm.column, "lag_us": wm.delay_us, "idle_us": None})
            stream.timestamp_column = wm.column
        return stream

    def _values(self, node: Values) -> DataStream:
        return self.env.from_collection(node.rows, schema=", ".join(f"`{f.name}` {f.type}" for f in node.fields),
                                        name="Source: Values")

    # -- stateless --------------------------------------------------------------------------------
    def _used_functions(self, texts: list[str | None]) -> dict | None:
        """The Python scalar functions these Spark SQL texts call ({name called: (function, Spark result type, called
        without arguments)}), shipped with the operator, which registers them in its Spark session by those names."""
        used = {name: (f.function, f.result_type, name.endswith(user_functions.NULLARY))
                for name, f in user_functions.called_in(texts, self.functions).items()}
        return used or None

    def _aggregate_functions(self, aggregates: list[Aggregate]) -> dict | None:
        """The Python aggregate functions of ``aggregates`` by aggregate name, shipped with the operators."""
        used = {a.name: self.functions[a.function or ""].function for a in aggregates if a.fn == "udaf"}
        return used or None

    def _aggregate_spec(self, a: Aggregate) -> dict:
        """An aggregate as the runtime's operators take it; a Python one with its arguments and whether its rows
        travel raw (pandas functions and those whose accumulators do not merge) or as partial accumulators."""
        spec: dict = {"name": a.name, "fn": a.fn, "column": a.column, "integral": a.integral, "type": a.type}
        if a.fn == "udaf":
            function = self.functions[a.function or ""].function
            spec.update(args=a.inputs, raw=function.func_type == "pandas" or not function.mergeable)
        return spec

    def _calc(self, node: Calc) -> DataStream:
        stream = self.translate(node.input)
        if node.condition:
            stream = stream._then("filter", "Calc(where)", {"condition": node.condition},
                                  self._used_functions([node.condition]))
        identity = [sql for _, sql in node.exprs] == [quoted(n) for n in node.input.names] and \
            [n for n, _ in node.exprs] == node.input.names
        if not identity:
            exprs = [sql if sql == quoted(name) else f"{sql} AS {quoted(name)}" for name, sql in node.exprs]
            if node.input.updating:
                exprs.append(quoted(OP_COLUMN))
            stream = stream._then("select", "Calc(select)", {"exprs": exprs}, self._used_functions(exprs))
        stream.timestamp_column = node.rowtime
        return stream

    def _correlate(self, node: Correlate) -> DataStream:
        """A table function as a mapInArrow chained into its input's Spark plan."""
        stream = self.translate(node.input)
        params = {"args": node.args, "outer": node.outer, "fields": _ddl([(f.name, f.type) for f in node.function_fields])}
        name = f"Correlate({node.function.split('__py')[0]})"
        out = stream._then("table_function", name, params, self.functions[node.function].function)
        out.timestamp_column = node.rowtime
        return out

    def _union(self, node: Union) -> DataStream:
        streams = []
        for branch in node.branches:
            stream = self.translate(branch)
            if node.updating and not branch.updating:  # every row of an updating union carries its kind
                stream = stream._then("with_columns", "Changelog(+I)", {"columns": {OP_COLUMN: "CAST(0 AS TINYINT)"}})
            streams.append(stream)
        out = streams[0].union(*streams[1:])
        out.timestamp_column = node.rowtime
        return out

    def _windowtvf(self, node: WindowTVF) -> DataStream:
        """A window TVF read row by row (not under a window aggregate or join): its rows with their windows."""
        from runtime.sql.windows import plain_calc

        return self.translate(plain_calc(node))

    # -- stateful ---------------------------------------------------------------------------------
    def _windowaggregate(self, node: WindowAggregate) -> DataStream:
        stream = self.translate(node.input)
        counted = {a.name: f"__cnt_{a.name}" for a in node.aggregates if a.fn == "count" and a.column}
        if counted:  # COUNT(x) counts the rows where x is not NULL
            stream = stream._then("with_columns", "Calc(count)", {"columns": {
                counted[a.name]: f"CASE WHEN {quoted(a.column)} IS NULL THEN 0 ELSE 1 END"
                for a in node.aggregates if a.name in counted}})
        specs = [{"name": a.name, "fn": "sum", "column": counted[a.name], "type": a.type} if a.name in counted
                 else self._aggregate_spec(a) for a in node.aggregates]
        params = {"keys": node.keys, "window": node.window, "aggregates": specs, "ts_column": node.time_column,
                  "allowed_lateness_us": 0, "window_time": node.rowtime is not None}
        udafs = self._aggregate_functions(node.aggregates)
        combine = stream.forward()._then("window_combine", "LocalWindowAggregate", {**params, "follows_input": True},
                                         udafs)
        out = combine._then("window_aggregate", "WindowAggregate", params, udafs, partitioning="hash",
                            keys=node.keys)
        out.timestamp_column = node.rowtime
        return out

    def _groupaggregate(self, node: GroupAggregate) -> DataStream:
        stream = self.translate(node.input)
        aggs = [self._aggregate_spec(a) for a in node.aggregates]
        udafs = self._aggregate_functions(node.aggregates)
        local = not node.input.updating and all(not a["fn"].endswith("_distinct") and not a.get("raw") for a in aggs)
        if local:
            stream = stream.forward()._then("local_aggregate", "LocalGroupAggregate",
                                            {"keys": node.keys, "aggregates": aggs, "follows_input": True}, udafs)
        params: dict = {"keys": node.keys, "aggregates": aggs, "preaggregated": local, "emit_final": node.emit_final,
                        "agg_schema": _ddl([(a.name, a.type) for a in node.aggregates]) or None}
        out = stream._then("sql_group_aggregate", "GroupAggregate", params, udafs, partitioning="hash", keys=node.keys)
        out.timestamp_column = None
        return out

    def _keyed(self, stream: DataStream, keys: list[str]) -> tuple[DataStream, list[str]]:
        """A stream and the keys to hash it by; no keys means one key for all rows (``__global``)."""
        if keys:
            return stream, keys
        out = stream._then("with_columns", "Calc(global key)", {"columns": {"__global": "0"}})
        out.timestamp_column = stream.timestamp_column
        return out, ["__global"]

    def _rank(self, node: Rank) -> DataStream:
        stream, keys = self._keyed(self.translate(node.input), node.partition)
        params = {"partition": node.partition, "fields": node.input.names,  # not the global key added for hashing
                  "order": [list(o) for o in node.order], "limit": node.limit,
                  "number": node.number_field, "keep_all": node.input.updating, "emit_final": node.emit_final,
                  "start": node.start, "function": node.function}
        out = stream._then("sql_rank", "Rank", params, partitioning="hash", keys=keys)
        out.timestamp_column = None
        return out

    def _sort(self, node: Sort) -> DataStream:
        stream, keys = self._keyed(self.translate(node.input), [])
        params = {"fields": node.input.names, "time_column": node.input.rowtime, "order": [list(o) for o in node.order]}
        out = stream._then("sql_sort", "TemporalSort", params, partitioning="hash", keys=keys)
        out.timestamp_column = node.rowtime
        return out

    def _over(self, node: Over) -> DataStream:
        stream, keys = self._keyed(self.translate(node.input), node.partition)
        aggs = [{"name": a.name, "fn": a.fn, "column": a.column, "integral": a.integral, "type": a.type,
                 "args": list(a.args)} for a in node.aggregates]
        params = {"partition": keys, "time_column": node.time_column, "frame": node.frame, "aggregates": aggs,
                  "agg_schema": _ddl([(a.name, a.type) for a in node.aggregates])}
        out = stream._then("sql_over", "OverAggregate", params, partitioning="hash", keys=keys)
        out.timestamp_column = node.time_column
        return out

    def _match(self, node: Match) -> DataStream:
        stream, keys = self._keyed(self.translate(node.input), node.partition)
        schema = _ddl([(p, node.type_of(p)) for p in node.partition] + [(a["name"], a["type"]) for a in node.atoms])
        params = {"partition": node.partition, "time_column": node.time_column, "order": [list(o) for o in node.order],
                  "pattern": node.pattern, "atoms": node.atoms, "fields": node.input.names, "schema": schema}
        out = stream._then("sql_match", "Match", params, partitioning="hash", keys=keys)
        out.timestamp_column = node.rowtime
        return out

    def _join(self, node: Join) -> DataStream:
        params: dict = {"kind": node.kind, "left_fields": node.left.names, "right_fields": node.right.names,
                        "left_keys": node.left_keys, "right_keys": node.right_keys, "emit_final": node.emit_final,
                        "null_aware": node.null_aware}
        kind, name = "sql_join", "Join"
        if node.interval is not None:
            kind, name = "sql_interval_join", "IntervalJoin"
            params.update(node.interval)
        elif node.window is not None:
            kind, name = "sql_window_join", "WindowJoin"
            params.update(left_window=list(node.window["left"]), right_window=list(node.window["right"]))
        return self._two_inputs(node, kind, name, params)

    def _temporaljoin(self, node: TemporalJoin) -> DataStream:
        params = {"kind": node.kind, "left_fields": node.left.names, "right_fields": node.right.names,
                  "left_keys": node.left_keys, "right_keys": node.right_keys, "left_time": node.left_time,
                  "right_time": node.right_time, "keep_last": node.keep_last}
        return self._two_inputs(node, "sql_temporal_join", "TemporalJoin", params)

    def _two_inputs(self, node, kind: str, name: str, params: dict) -> DataStream:
        """A join operator fed by both sides, each tagged with ``__side`` and hashed by its keys (one key for all
        rows when there are none: a window join on the window alone)."""
        sides = [self.translate(child)._then("with_columns", "Calc(side)", {"columns": {"__side": f"CAST({i} AS TINYINT)"}})
                 for i, child in enumerate((node.left, node.right))]
        keys = (node.left_keys, node.right_keys)
        if not node.left_keys:
            sides = [s._then("with_columns", "Calc(global key)", {"columns": {"__global": "0"}}) for s in sides]
            keys = (["__global"], ["__global"])
            params.update(left_keys=["__global"], right_keys=["__global"])
        op = self.env.add_operator(kind, name, params, None)
        for stream, side_keys in zip(sides, keys):
            self.env.add_edge(stream.op, op, "hash", list(side_keys))
        return DataStream(self.env, op, node.rowtime)

    def _lookupjoin(self, node: LookupJoin) -> DataStream:
        """Chained after its input: no exchange, each subtask looks its rows' keys up itself."""
        stream = self.translate(node.input)
        params = {"kind": node.kind, "left_keys": node.left_keys, "right_keys": node.right_keys,
                  "right_fields": [list(p) for p in node.right_fields], "lookup": connectors.lookup_params(node.table)}
        out = stream._then("sql_lookup_join", f"LookupJoin({node.table.name})", params)
        out.timestamp_column = node.rowtime
        return out

    # -- sinks ------------------------------------------------------------------------------------
    def _sink(self, node: Sink) -> DataStream:
        stream = self.translate(node.input)
        params = node.params or collect_params()
        name = "Collect" if node.target == "collect" else f"Sink: {node.target}"
        keyed = {"partitioning": "hash", "keys": node.upsert_key} if node.upsert_key else {}  # a key's changes, in order
        out = stream._then("sink", name, params, **keyed)
        return out.set_parallelism(params[SINK_PARALLELISM]) if SINK_PARALLELISM in params else out


def _ddl(columns: list[tuple[str, str]]) -> str:
    return ", ".join(f"{quoted(n)} {t}" for n, t in columns)


__all__ = ["Translator", "pack_udf"]
