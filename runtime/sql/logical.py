"""The logical plan: small relational nodes, each printable, produced by runtime.sql.converter.

Every node has its output ``fields`` (unique names with Spark types), the event-time attribute it
keeps (``rowtime``, a field name or None) and whether it emits a changelog (``updating``). The
translator (runtime.sql.translator) turns each node kind into operators of a JobGraph.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

UNLIMITED = 2**62  # a Rank that keeps every row: ORDER BY without LIMIT in batch mode


@dataclass
class Field:
    """A column of a node's output: a unique name and a Spark DDL type."""
    name: str
    type: str


@dataclass
class Node:
    """A relational operator of the logical plan."""
    fields: list[Field]

    @property
    def names(self) -> list[str]:
        """The output field names, in order."""
        return [f.name for f in self.fields]

    def type_of(self, name: str) -> str:
        """The Spark type of output field ``name``."""
        return next(f.type for f in self.fields if f.name == name)

    @property
    def inputs(self) -> list[Node]:
        """The nodes this one reads, in order: its fields that hold a node or a list of nodes."""
        found: list[Node] = []
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if isinstance(value, Node):
                found.append(value)
            elif isinstance(value, list) and value and all(isinstance(v, Node) for v in value):
                found += value
        return found

    @property
    def rowtime(self) -> str | None:
        """The event-time attribute the node's rows keep, or None."""
        return None

    @property
    def updating(self) -> bool:
        """Whether the node emits a changelog (retractions) rather than inserts only."""
        return any(i.updating for i in self.inputs)

    def describe(self) -> str:
        """One line for EXPLAIN, also the base of the operators' uids."""
        return type(self).__name__


@dataclass
class Scan(Node):
    """Reads a catalog table or a registered DataStream."""
    table: Any  # catalog TableDef or StreamTable
    time_attribute: str | None = None
    changelog: bool = False  # the connector reads a changelog (change data capture)

    @property
    def rowtime(self) -> str | None:
        """The column the table's WATERMARK declares, or the registered stream's time column."""
        return self.time_attribute

    @property
    def updating(self) -> bool:
        """A scan reads inserts only, unless its connector reads a changelog."""
        return self.changelog

    def describe(self) -> str:
        wm = getattr(self.table, "watermark", None)
        extra = f", watermark={wm.column} - {wm.delay_us // 1000} ms" if wm is not None else ""
        return f"TableSourceScan(table=[{self.table.name}], fields=[{', '.join(self.names)}]{extra})"


@dataclass
class Values(Node):
    """Rows of literals (VALUES, or the one row of a SELECT without FROM)."""
    rows: list[dict]

    def describe(self) -> str:
        return f"Values(rows={len(self.rows)}, fields=[{', '.join(self.names)}])"


@dataclass
class Calc(Node):
    """Projection and filter in Spark SQL over the input's fields."""
    input: Node
    exprs: list[tuple[str, str]]  # (output name, Spark SQL)
    condition: str | None = None
    keeps_rowtime: str | None = None


    @property
    def rowtime(self):
        """The time attribute under its name after the projection, when the Calc keeps it."""
        return self.keeps_rowtime

    def describe(self) -> str:
        select = ", ".join(sql if sql == f"`{name}`" else f"{sql} AS {name}" for name, sql in self.exprs)
        where = f", where=[{self.condition}]" if self.condition else ""
        return f"Calc(select=[{select}]{where})"


@dataclass
class Aggregate:
    """One aggregate call: its function, input field and result type."""
    name: str
    fn: str  # count, sum, min, max, avg, count_distinct, udaf (a Python aggregate function)
    column: str | None  # input field (None: COUNT(*))
    type: str  # result type (Spark DDL)
    integral: bool = False  # AVG of an integer type is an integer in Flink
    args: tuple = ()  # constant arguments after the column (LAG's offset and default)
    inputs: list[str] = field(default_factory=list)  # a Python aggregate function's input fields
    function: str | None = None  # a Python aggregate function's Spark name (runtime.sql.user_functions)

    def call(self) -> str:
        """How EXPLAIN shows the call."""
        if self.fn == "udaf":
            return f"{(self.function or '').split('__py')[0]}({', '.join(self.inputs)})"
        return f"{self.fn}({self.column or '*'})"


@dataclass
class WindowAggregate(Node):
    """GROUP BY window_start, window_end, keys over a window TVF: append-only, fired by watermarks."""
    input: Node
    window: dict  # runtime window params: tumbling/sliding/cumulate/session with sizes in microseconds
    keys: list[str]
    aggregates: list[Aggregate]
    time_column: str
    emit_final: bool = False


    @property
    def updating(self) -> bool:
        """A window fires once, when the watermark passes its end: inserts only."""
        return False

    @property
    def rowtime(self):
        """window_time, when the aggregate gives it (grouped by it): a time attribute for windows after this one."""
        return "window_time" if "window_time" in self.names else None

    def describe(self) -> str:
        aggs = ", ".join(f"{a.call()} AS {a.name}" for a in self.aggregates)
        return f"WindowAggregate(groupBy=[{', '.join(self.keys)}], window=[{_window(self.window)}], " \
               f"time=[{self.time_column}], select=[{aggs}])"


@dataclass
class GroupAggregate(Node):
    """A non-windowed GROUP BY: an updating result (a final one in batch mode)."""
    input: Node
    keys: list[str]
    aggregates: list[Aggregate]
    emit_final: bool = False


    @property
    def updating(self) -> bool:
        """Updating in streaming mode; in batch mode each group is emitted once, final."""
        return not self.emit_final

    def describe(self) -> str:
        aggs = ", ".join(f"{a.call()} AS {a.name}" for a in self.aggregates)
        return f"GroupAggregate(groupBy=[{', '.join(self.keys)}], select=[{aggs}])"


@dataclass
class Rank(Node):
    """Top-N (and deduplication, N = 1) per partition key: ROW_NUMBER() OVER (...) <= N."""
    input: Node
    partition: list[str]
    order: list[tuple[str, bool, bool]]  # (field, ascending, nulls first)
    limit: int  # the last rank kept
    number_field: str | None  # the row number column when the query keeps it
    emit_final: bool = False
    start: int = 1  # the first rank kept
    function: str = "row_number"  # or rank, dense_rank


    @property
    def updating(self) -> bool:
        """Updating in streaming mode (a row leaves the top N when a better one comes); final in batch mode."""
        return not self.emit_final

    def describe(self) -> str:
        order = ", ".join(f"{c} {'ASC' if asc else 'DESC'}{'' if nf == asc else ' NULLS ' + ('FIRST' if nf else 'LAST')}"
                          for c, asc, nf in self.order)
        last = self.limit if self.limit < UNLIMITED else ""
        return f"Rank(rankType=[{self.function.upper()}], partitionBy=[{', '.join(self.partition)}], " \
               f"orderBy=[{order}], rankRange=[{self.start}..{last}])"


@dataclass
class Sort(Node):
    """ORDER BY the time attribute (then other columns) of a streaming query: rows leave sorted as the watermark
    passes them; append-only."""
    input: Node
    order: list[tuple[str, bool, bool]]  # (field, ascending, nulls first), the time attribute first

    @property
    def rowtime(self):
        """The rows keep their time attribute."""
        return self.input.rowtime

    def describe(self) -> str:
        order = ", ".join(f"{c} {'ASC' if asc else 'DESC'}" for c, asc, _ in self.order)
        return f"TemporalSort(orderBy=[{order}])"


@dataclass
class Over(Node):
    """Aggregates over a time-ordered frame per partition: OVER (PARTITION BY ... ORDER BY rowtime ...)."""
    input: Node
    partition: list[str]
    time_column: str
    frame: dict  # {"rows": n} or {"range_us": n}
    aggregates: list[Aggregate]


    @property
    def rowtime(self):
        """An OVER aggregate keeps every input row and its time attribute."""
        return self.time_column

    def describe(self) -> str:
        aggs = ", ".join(f"{a.call()} AS {a.name}" for a in self.aggregates)
        rows, range_us = self.frame.get("rows"), self.frame.get("range_us")
        frame = (f"ROWS {'UNBOUNDED' if rows is None else rows} PRECEDING" if "rows" in self.frame else
                 f"RANGE {'UNBOUNDED' if range_us is None else f'{range_us // 1000} ms'} PRECEDING")
        return f"OverAggregate(partitionBy=[{', '.join(self.partition)}], orderBy=[{self.time_column}], " \
               f"{frame}, select=[{aggs}])"


@dataclass
class Join(Node):
    """Regular, interval and window joins on equality keys; ``kind`` inner/left/right/full, or semi/anti (the left
    rows with or without partners: IN and EXISTS, their negations; ``null_aware`` the columns NOT IN compares)."""
    left: Node
    right: Node
    kind: str
    left_keys: list[str]
    right_keys: list[str]
    condition: str | None = None  # residual, over the joined fields
    interval: dict | None = None  # interval join: {"left_time", "right_time", "lower_us", "upper_us"}
    window: dict | None = None  # window join: {"left": (start, end), "right": (start, end)} field names
    emit_final: bool = False
    null_aware: list[str] | None = None


    @property
    def updating(self) -> bool:
        """Interval and window joins, and inner joins of insert-only inputs, emit inserts only; an outer
        regular join retracts its NULL-padded rows when a match arrives."""
        if self.interval is not None or self.window or self.emit_final:
            return False
        return self.kind not in ("inner", "semi") or super().updating

    @property
    def rowtime(self):
        """An interval join keeps a time attribute, since it holds back the watermark by its bounds: the left
        input's (inner and left joins) or the right's (right joins); a full join keeps none (either side's time
        may be NULL). Other joins keep none."""
        if not self.interval:
            return None
        return {"inner": self.interval["left_time"], "left": self.interval["left_time"],
                "right": self.interval["right_time"]}.get(self.kind)

    def describe(self) -> str:
        on = " AND ".join(f"{a} = {b}" for a, b in zip(self.left_keys, self.right_keys))
        kind = "IntervalJoin" if self.interval else "WindowJoin" if self.window else "Join"
        extra = f", between=[{self.interval['lower_us'] // 1000} ms, {self.interval['upper_us'] // 1000} ms]" \
            if self.interval else ""
        residual = f", where=[{self.condition}]" if self.condition else ""
        if self.null_aware:  # NOT IN: equal, or NULL on either side
            residual += f", nullAware=[{self.null_aware[0]} = {self.null_aware[1]}]"
        return f"{kind}(joinType=[{self.kind.upper()}], on=[{on}]{extra}{residual})"


@dataclass
class LookupJoin(Node):
    """A processing-time lookup join: each input row joined with the rows a lookup table's connector finds for
    its keys when it passes (``JOIN t FOR SYSTEM_TIME AS OF s.proc_time``); ``kind`` inner or left."""
    input: Node
    table: Any  # the catalog TableDef looked up
    kind: str
    left_keys: list[str]
    right_keys: list[str]  # the table's columns
    right_fields: list[tuple[str, str]]  # (table column, output field)

    @property
    def rowtime(self):
        """The input's time attribute passes through."""
        return self.input.rowtime

    def describe(self) -> str:
        on = " AND ".join(f"{a} = {b}" for a, b in zip(self.left_keys, self.right_keys))
        return f"LookupJoin(table=[{self.table.name}], joinType=[{self.kind.upper()}], on=[{on}])"


@dataclass
class Correlate(Node):
    """A table function joined to each row of its input (``LATERAL TABLE(f(...))``): the row once per row the
    function gives for it (``outer``, a LEFT JOIN ... ON TRUE: once with NULLs when it gives none)."""
    input: Node
    function: str  # the Python table function's Spark name (runtime.sql.user_functions)
    args: list[str]  # Spark SQL of its arguments over the input's fields
    function_fields: list[Field]  # the columns the function adds (the last of ``fields``)
    outer: bool = False

    @property
    def rowtime(self):
        """The input's time attribute passes through."""
        return self.input.rowtime

    def describe(self) -> str:
        name = self.function.split("__py")[0]
        return f"Correlate(invocation=[{name}({', '.join(self.args)})], joinType=[{'LEFT' if self.outer else 'INNER'}]" \
               f", fields=[{', '.join(f.name for f in self.function_fields)}])"


@dataclass
class Union(Node):
    """UNION ALL of branches with the same fields."""
    branches: list[Node] = field(default_factory=list)


    @property
    def rowtime(self):
        """The branches' time attribute when they all have the same one."""
        times = {b.rowtime for b in self.branches}
        return times.pop() if len(times) == 1 else None

    def describe(self) -> str:
        return f"Union(all=[true], fields=[{', '.join(self.names)}])"


@dataclass
class Sink(Node):
    """The end of a plan: a table to write into, or the client's collect."""
    input: Node
    target: str  # table name, or "collect"
    params: dict = field(default_factory=dict)
    upsert_key: list[str] = field(default_factory=list)  # an upsert sink's key: its rows are hashed by it


    def describe(self) -> str:
        return f"Sink(table=[{self.target}], fields=[{', '.join(self.input.names)}])"


def _window(window: dict) -> str:
    ms = {k: v // 1000 for k, v in window.items() if k.endswith("_us")}
    if window["type"] == "tumbling":
        return f"TUMBLE(size=[{ms['size_us']} ms])"
    if window["type"] == "sliding":
        return f"HOP(slide=[{ms['slide_us']} ms], size=[{ms['size_us']} ms])"
    if window["type"] == "cumulate":
        return f"CUMULATE(step=[{ms['step_us']} ms], max_size=[{ms['size_us']} ms])"
    return f"SESSION(gap=[{ms['gap_us']} ms])"


@dataclass
class WindowTVF(Node):
    """TUMBLE/HOP/CUMULATE/SESSION(TABLE t, DESCRIPTOR(ts), ...): rows with window_start/end/time.

    A window aggregate consumes it as a whole; read row by row (a projection, a window join) TUMBLE, HOP
    and CUMULATE become Calcs giving each row once per window (runtime.sql.windows.plain_tvf)."""
    input: Node
    window: dict
    time_column: str
    partition: list[str] = field(default_factory=list)


    @property
    def rowtime(self):
        """The input's time attribute stays one."""
        return self.input.rowtime

    def describe(self) -> str:
        return f"WindowTableFunction(window=[{_window(self.window)}], time=[{self.time_column}])"
