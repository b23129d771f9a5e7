"""The SQL group aggregate: the stateful half of a non-windowed ``GROUP BY`` (an updating result).

Upstream, in the producer's Spark plan, rows are pre-aggregated per key and bundle
(runtime.taskmanager.spark_aggregates); after the hash exchange this operator merges the partials
into each key's accumulators (keyed state, checkpointed by key group) and emits, per key changed by
the bundle, what changed: +I for a new key, -U old / +U new when the result changed, -D when the
key's last row was retracted. Inputs that are changelogs themselves (an aggregate over an aggregate
or a join) arrive raw with their row kinds and are added or retracted row by row. A Python aggregate
function's accumulator is kept as it is (runtime.taskmanager.udf_aggregates): partial accumulators made
in Spark are merged into it, raw rows accumulated or retracted.

With ``emit_final`` (batch mode) nothing is emitted until the end of the input, then one +I per key.
"""
from __future__ import annotations

from collections import Counter
from typing import Any

import pyarrow as pa

from runtime.ddl import arrow_schema
from runtime.keygroups import KEY_GROUP_COLUMN
from runtime.taskmanager import changelog
from runtime.taskmanager.keyed_state import KeyedStateOperator
from runtime.taskmanager.sql_values import finish_average, finish_sum
from runtime.taskmanager.udf_aggregates import python_aggregates
from runtime.taskmanager.window_operator import END_OF_TIME

RECORDS = "__records"
VALUE_FUNCTIONS = ("lag", "first_value", "last_value")  # OVER only: values of rows in the frame, not a fold


def partial_names(index: int, fn: str) -> list[str]:
    """Columns of aggregate ``index``'s partial in a pre-aggregated bundle."""
    return [f"__p{index}_s", f"__p{index}_c"] if fn in ("sum", "avg") else [f"__p{index}"]


class Accumulator:
    """One aggregate of one key: count, sum, min, max, avg or count distinct, retractable; its result in the
    SQL result type ``type_`` when given (runtime.taskmanager.sql_values). In an OVER frame also LAG (``args``:
    offset, default), FIRST_VALUE and LAST_VALUE, which only add."""

    type: str | None = None  # accumulators restored from snapshots taken before results were typed

    def __init__(self, fn: str, integral: bool, type_: str | None = None, args: tuple = ()):
        self.fn, self.integral, self.type, self.args = fn, integral, type_, tuple(args)
        self.recent: list = []
        self.first_or_last: Any = None
        self.total, self.count = 0, 0
        self.values: Counter | None = Counter() if fn in ("min", "max") or fn.endswith("_distinct") else None

    def add(self, value: Any, sign: int) -> None:
        if self.fn in VALUE_FUNCTIONS:
            self._add_value(value)
            return
        if value is None:
            return
        self.count += sign
        if self.fn in ("sum", "avg"):
            self.total += value * sign
        elif self.values is not None:
            self.values[value] += sign
            if self.values[value] <= 0:
                del self.values[value]

    def merge_partial(self, partial: list[Any]) -> None:
        """Add a pre-aggregated partial (append-only input): see partial_names for its shape."""
        if self.fn in ("sum", "avg"):
            total, count = partial
            if count:
                self.total += total
                self.count += count
        elif self.fn == "count":
            self.count += partial[0] or 0
        elif partial[0] is not None:
            self.add(partial[0], 1)

    def _add_value(self, value: Any) -> None:
        """OVER's value functions (append-only): FIRST_VALUE and LAST_VALUE skip NULLs, LAG keeps the last n + 1."""
        if self.fn == "lag":
            self.recent = (self.recent + [value])[-(self.args[0] + 1):]
        elif value is not None and (self.fn == "last_value" or self.count == 0):
            self.first_or_last, self.count = value, 1

    def result(self) -> Any:
        if self.fn == "lag":
            offset, default = self.args
            return self.recent[0] if len(self.recent) == offset + 1 else default
        if self.fn in ("first_value", "last_value"):
            return self.first_or_last if self.count else None
        if self.fn == "count":
            return self.count
        if self.fn == "count_distinct":
            return len(self.values)
        if self.fn in ("sum_distinct", "avg_distinct"):
            if not self.values:
                return None
            total = sum(self.values)
            return finish_sum(total, self.type) if self.fn == "sum_distinct" else \
                finish_average(total, len(self.values), self.type)
        if self.fn in ("min", "max"):
            return (min if self.fn == "min" else max)(self.values) if self.values else None
        if self.count <= 0:
            return None
        if self.fn == "sum":
            return finish_sum(self.total, self.type)
        if self.type is None and self.integral:
            return int(self.total / self.count)
        return finish_average(self.total, self.count, self.type)

    @classmethod
    def of(cls, spec: dict) -> Accumulator:
        """The accumulator an aggregate spec ({fn, integral, type}) asks for."""
        return cls(spec["fn"], spec.get("integral", False), spec.get("type"), spec.get("args", ()))


class GroupAggregateOperator(KeyedStateOperator):
    late_records = 0

    def __init__(self, params: dict, udafs: dict | None = None):
        self.keys: list[str] = params["keys"]
        self.aggs: list[dict] = params["aggregates"]  # {name, fn, column, integral; a Python one's args, type}
        self.python = python_aggregates(self.aggs, udafs)  # by aggregate name
        # the aggregates' types; the keys keep the input's
        self.agg_schema = arrow_schema(params["agg_schema"]) if params.get("agg_schema") else pa.schema([])
        self.schema: pa.Schema | None = None
        self.preaggregated = bool(params.get("preaggregated"))
        self.emit_final = bool(params.get("emit_final"))
        super().__init__()
        self.dirty: dict[tuple[int, Any], None] = {}

    def _new_state(self) -> dict:
        accs = [self.python[a["name"]].create() if a["fn"] == "udaf" else Accumulator.of(a) for a in self.aggs]
        return {"records": 0, "accs": accs, "prev": None}

    def process(self, table: pa.Table) -> pa.Table | None:
        if table.num_rows == 0:
            return None
        if self.schema is None:
            self.schema = pa.schema([table.schema.field(k) for k in self.keys] + list(self.agg_schema))
        keys = _key_tuples(table, self.keys)
        groups = table.column(KEY_GROUP_COLUMN).to_pylist()
        if self.preaggregated:
            self._merge_partials(table, keys, groups)
        else:
            self._add_rows(table, keys, groups)
        return None if self.emit_final else self._emit(list(self.dirty))

    def _state(self, kg: int, key: tuple) -> dict:
        self.backend.set_current_key(kg, key)
        state = self.backend.read("agg", None)
        if state is None:
            state = self._new_state()
            self.backend.write("agg", state)
        self.dirty[(kg, key)] = None
        return state

    def _merge_partials(self, table: pa.Table, keys: list[tuple], groups: list[int]) -> None:
        records = table.column(RECORDS).to_pylist()
        partials = [[table.column(c).to_pylist() for c in partial_names(i, a["fn"])] for i, a in enumerate(self.aggs)]
        for row, (kg, key) in enumerate(zip(groups, keys)):
            state = self._state(kg, key)
            state["records"] += records[row]
            for spec, acc, columns in zip(self.aggs, state["accs"], partials):
                if spec["fn"] == "udaf":
                    self.python[spec["name"]].merge(acc, [columns[0][row]])
                else:
                    acc.merge_partial([c[row] for c in columns])

    def _add_rows(self, table: pa.Table, keys: list[tuple], groups: list[int]) -> None:
        signs = [1 if changelog.is_addition(op) else -1 for op in changelog.ops_of(table)]
        values = [_arguments(table, a) if a["fn"] == "udaf" else table.column(a["column"]).to_pylist()
                  if a.get("column") else None for a in self.aggs]
        for row, (kg, key) in enumerate(zip(groups, keys)):
            state = self._state(kg, key)
            state["records"] += signs[row]
            for spec, acc, column in zip(self.aggs, state["accs"], values):
                if spec["fn"] == "udaf" and column is not None:
                    self.python[spec["name"]].add(acc, column[row], signs[row])
                else:
                    acc.add(1 if column is None else column[row], signs[row])

    def _emit(self, changed: list[tuple[int, Any]]) -> pa.Table | None:
        rows, ops = [], []
        for kg, key in changed:
            self.backend.set_current_key(kg, key)
            state = self.backend.read("agg", None)
            new = None if state["records"] <= 0 else key + self._results(state["accs"])
            prev = state["prev"]
            if new is None:
                self.backend.clear("agg")
                if prev is not None:
                    rows.append(prev)
                    ops.append(changelog.DELETE)
                continue
            if prev is None:
                rows.append(new)
                ops.append(changelog.INSERT)
            elif new != prev:
                rows += [prev, new]
                ops += [changelog.UPDATE_BEFORE, changelog.UPDATE_AFTER]
            state["prev"] = new
            self.backend.write("agg", state)
        self.dirty.clear()
        return changelog.rows_table(rows, ops, self.schema)

    def _results(self, accs: list) -> tuple:
        return tuple(self.python[spec["name"]].value(acc) if spec["fn"] == "udaf" else acc.result()
                     for spec, acc in zip(self.aggs, accs))

    def on_watermark(self, watermark: int) -> pa.Table | None:
        if self.emit_final and watermark == END_OF_TIME:
            return self._emit(sorted({kg_key for kg_key in self.backend.values}, key=repr))
        return None


def _arguments(table: pa.Table, spec: dict) -> list[tuple]:
    """A Python aggregate's argument values, one tuple per row."""
    columns = [table.column(a).to_pylist() for a in spec["args"]]
    return list(zip(*columns)) if columns else [()] * table.num_rows


def _key_tuples(table: pa.Table, keys: list[str]) -> list[tuple]:
    columns = [table.column(k).to_pylist() for k in keys]
    return list(zip(*columns)) if columns else [()] * table.num_rows
