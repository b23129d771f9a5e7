"""SQL's OVER aggregation: per partition key, each row with aggregates over the rows before it in time.

Rows wait until the watermark passes their time (so they are processed in time order, as Flink's
event-time OVER does), then each gets the aggregates over its frame: ``ROWS n PRECEDING`` (itself and
the n rows before), ``RANGE interval PRECEDING`` (every row of the key at most that much older,
including rows of the same time), or UNBOUNDED PRECEDING (everything before, kept as running
accumulators). Late rows (at or behind the watermark when they arrive) are dropped and counted.
The output is append-only: the input's columns plus the aggregates.
"""
from __future__ import annotations

import pyarrow as pa

from runtime.ddl import arrow_schema
from runtime.keygroups import KEY_GROUP_COLUMN
from runtime.taskmanager import changelog
from runtime.taskmanager.group_aggregate import Accumulator
from runtime.taskmanager.time_ordered import TimeOrderedOperator


class OverOperator(TimeOrderedOperator):
    def __init__(self, params: dict, _udf=None):
        super().__init__(params["time_column"])
        self.partition: list[str] = params["partition"]
        self.rows_frame = params["frame"].get("rows", -1) if "rows" in params["frame"] else -1
        self.range_us = params["frame"].get("range_us") if "range_us" in params["frame"] else -1
        self.aggs: list[dict] = params["aggregates"]
        self.agg_schema = arrow_schema(params["agg_schema"])
        self.unbounded = self.rows_frame is None or self.range_us is None
        self.names: list[str] | None = None
        self.schema: pa.Schema | None = None

    def process(self, table: pa.Table) -> pa.Table | None:
        if table.num_rows == 0:
            return None
        if self.names is None:
            self.names = [n for n in table.column_names if n not in (KEY_GROUP_COLUMN, changelog.OP_COLUMN)]
            self.schema = pa.schema([table.schema.field(n) for n in self.names] + list(self.agg_schema))
        for row, ts, kg in self.timely_rows(table, self.names):
            key = tuple(row[self.names.index(p)] for p in self.partition)
            self.backend.set_current_key(kg, key)
            state = self.backend.read("over", None) or {"pending": [], "history": [], "accs": None}
            state["pending"].append((ts, row))
            self.backend.write("over", state)
        return None

    def on_watermark(self, watermark: int) -> pa.Table | None:
        if not self.advance(watermark):
            return None
        out: list[tuple] = []
        for kg_key in list(self.backend.values):
            self.backend.set_current_key(*kg_key)
            state = self.backend.read("over", None)
            due = sorted((p for p in state["pending"] if p[0] <= watermark), key=lambda p: p[0])
            if due:
                state["pending"] = [p for p in state["pending"] if p[0] > watermark]
                out += self._fire(state, due)
            self._trim(state, watermark)
            self.backend.write("over", state)
        if not out:
            return None
        return pa.Table.from_pylist([dict(zip(self.schema.names, r)) for r in out], schema=self.schema)

    def _fire(self, state: dict, due: list[tuple[int, tuple]]) -> list[tuple]:
        """Rows due, in time order: ROWS frames row by row; RANGE frames a time's rows together (peers)."""
        out: list[tuple] = []
        i = 0
        while i < len(due):
            ts = due[i][0]
            peers = [row for t, row in due[i:] if t == ts]
            for row in peers:
                state["history"].append((ts, row))
                if self.unbounded:
                    self._accumulate(state, row)
                if self.rows_frame != -1:
                    out.append(row + self._results(state, ts))
            if self.rows_frame == -1:
                results = self._results(state, ts)
                out += [row + results for row in peers]
            i += len(peers)
        return out

    def _accumulate(self, state: dict, row: tuple) -> None:
        if state["accs"] is None:
            state["accs"] = [Accumulator.of(a) for a in self.aggs]
        for acc, spec in zip(state["accs"], self.aggs):
            acc.add(1 if spec["column"] is None else row[self.names.index(spec["column"])], 1)

    def _results(self, state: dict, ts: int) -> tuple:
        if self.unbounded:
            return tuple(a.result() for a in state["accs"])
        if self.rows_frame != -1:
            frame = [row for _, row in state["history"][-(self.rows_frame + 1):]]
        else:
            frame = [row for t, row in state["history"] if ts - self.range_us <= t <= ts]
        accs = [Accumulator.of(a) for a in self.aggs]
        for row in frame:
            for acc, spec in zip(accs, self.aggs):
                acc.add(1 if spec["column"] is None else row[self.names.index(spec["column"])], 1)
        return tuple(a.result() for a in accs)

    def _trim(self, state: dict, watermark: int) -> None:
        if self.unbounded:
            state["history"] = []
        elif self.rows_frame != -1:
            state["history"] = state["history"][-self.rows_frame:] if self.rows_frame else []
        else:
            state["history"] = [(t, r) for t, r in state["history"] if t >= watermark - self.range_us]
