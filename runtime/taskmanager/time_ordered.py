"""Keyed operators whose rows wait for the watermark: event-time OVER aggregation and the temporal sort.

A row is taken only while it is ahead of the watermark (a row at or behind it is late: counted and dropped, as
Flink's event-time operators drop it); the operator then handles its rows in time order once a watermark
passes them. This base class holds the watermark, the late count and reading a bundle's rows with their times.
"""
from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa

from runtime.keygroups import KEY_GROUP_COLUMN
from runtime.taskmanager.keyed_state import KeyedStateOperator
from runtime.taskmanager.window_operator import BEFORE_TIME


class TimeOrderedOperator(KeyedStateOperator):
    def __init__(self, time_column: str):
        super().__init__()
        self.time_column = time_column
        self.watermark = BEFORE_TIME
        self.late_records = 0

    def timely_rows(self, table: pa.Table, names: list[str]) -> Iterator[tuple[tuple, int, int]]:
        """(row of ``names``, its time in microseconds, its key group) for each row not behind the watermark."""
        column = table.column(self.time_column)
        times = column.cast(pa.timestamp("us", tz=column.type.tz)).cast(pa.int64()).to_pylist()
        rows = zip(*[table.column(n).to_pylist() for n in names])
        for row, ts, kg in zip(rows, times, table.column(KEY_GROUP_COLUMN).to_pylist()):
            if ts is None or ts <= self.watermark:
                self.late_records += 1
                continue
            yield tuple(row), ts, kg

    def advance(self, watermark: int) -> bool:
        """Take a watermark; False when it is not ahead of the one already taken (nothing becomes due)."""
        if watermark <= self.watermark:
            return False
        self.watermark = watermark
        return True
