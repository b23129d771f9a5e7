"""SQL's temporal sort: ``ORDER BY rowtime [, more]`` of a streaming query, as Flink's does it.

Rows wait (keyed state, one key for all rows, so one subtask sorts) until the watermark passes their time, then
leave sorted by the ORDER BY: the result is append-only and in order, each row once. Rows already behind the
watermark when they arrive are late: counted and dropped, as Flink's sort drops them.
"""
from __future__ import annotations

import pyarrow as pa

from runtime.taskmanager import changelog
from runtime.taskmanager.rank_operator import sort_rows
from runtime.taskmanager.time_ordered import TimeOrderedOperator


class SortOperator(TimeOrderedOperator):
    def __init__(self, params: dict, _udf=None):
        super().__init__(params["time_column"])
        self.names: list[str] = params["fields"]
        self.order: list[tuple[str, bool, bool]] = [tuple(o) for o in params["order"]]
        self.types: dict[str, pa.DataType] = {}

    def process(self, table: pa.Table) -> pa.Table | None:
        if table.num_rows == 0:
            return None
        changelog.learn_types(self.types, table)
        for row, ts, kg in self.timely_rows(table, self.names):
            self.backend.set_current_key(kg, ())
            pending = self.backend.read("sort", None) or []
            pending.append((ts, row))
            self.backend.write("sort", pending)
        return None

    def on_watermark(self, watermark: int) -> pa.Table | None:
        if not self.advance(watermark):
            return None
        due: list[tuple] = []
        for kg_key in list(self.backend.values):
            self.backend.set_current_key(*kg_key)
            pending = self.backend.read("sort", [])
            due += [row for ts, row in pending if ts <= watermark]
            rest = [(ts, row) for ts, row in pending if ts > watermark]
            if rest:
                self.backend.write("sort", rest)
            else:
                self.backend.clear("sort")
        if not due:
            return None
        ordered = sort_rows(list(enumerate(due)), self.names, self.order)
        return changelog.typed_rows_table(self.names, [row for _, row in ordered], None, self.types)
