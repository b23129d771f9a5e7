"""SQL's time-bounded joins: interval joins and window joins, both append-only.

Interval join: ``l.k = r.k AND l.ts BETWEEN r.ts - a AND r.ts + b`` joins rows whose times differ by a
bounded amount; each arriving row joins the kept rows of the other side at once, and the watermark
ends rows that no future row can match (an outer join's unmatched rows are then emitted padded with NULLs).
The watermark it passes on is held back by the bounds (``watermark_delay``), so its output keeps a time
attribute.
Window join: both inputs are rows of the same window table function; rows wait per (key, window) until
the watermark passes the window's end, then the window's rows are joined (inner, left, right or full) and
forgotten. Inputs are tagged with ``__side`` as for the regular join (runtime.taskmanager.join_operator).
"""
from __future__ import annotations

import pyarrow as pa

from runtime.keygroups import KEY_GROUP_COLUMN
from runtime.taskmanager import changelog
from runtime.taskmanager.join_operator import LEFT, RIGHT, SIDE
from runtime.taskmanager.keyed_state import KeyedStateOperator
from runtime.taskmanager.window_operator import BEFORE_TIME


def micros(table: pa.Table, column: str) -> list:
    if column not in table.column_names:
        return [None] * table.num_rows
    col = table.column(column)
    if not pa.types.is_timestamp(col.type):  # all NULL in this bundle (rows of the other input only)
        return [None] * table.num_rows
    return col.cast(pa.timestamp("us", tz=col.type.tz)).cast(pa.int64()).to_pylist()


class TimeJoin(KeyedStateOperator):
    """The state and row handling the time-bounded joins share: both sides' fields and keys, the types seen."""
    late_records = 0

    def __init__(self, params: dict):
        self.fields = (params["left_fields"], params["right_fields"])
        self.keys = (params["left_keys"], params["right_keys"])
        super().__init__()
        self.types: dict[str, pa.DataType] = {}
        self.watermark = BEFORE_TIME

    def _rows(self, table: pa.Table, times: tuple[str, str]):
        """(row index, key group, key, side, time, row) of each input row, NULL keys skipped."""
        changelog.learn_types(self.types, table)
        columns = {n: changelog.column_values(table, n) for n in set(self.fields[0] + self.fields[1])}
        stamps = {side: micros(table, times[side]) for side in (LEFT, RIGHT)}
        for i, (side, kg) in enumerate(zip(table.column(SIDE).to_pylist(), table.column(KEY_GROUP_COLUMN).to_pylist())):
            key = tuple(columns[k][i] for k in self.keys[side])
            if None not in key:
                yield i, kg, key, side, stamps[side][i], tuple(columns[n][i] for n in self.fields[side])

    def _table(self, rows: list[tuple]) -> pa.Table | None:
        return changelog.typed_rows_table(self.fields[0] + self.fields[1], rows, None, self.types)


class IntervalJoinOperator(TimeJoin):
    """Interval join: a pair joins when ``lower <= left time - right time <= upper``. An outer side's row that
    matched nothing is emitted padded with NULLs once the watermark says no partner can come (append-only,
    as in Flink); a row with a NULL key matches nothing and is padded at once."""

    def __init__(self, params: dict, _udf=None):
        super().__init__(params)
        self.kind = params.get("kind", "inner")
        self.times = (params["left_time"], params["right_time"])
        self.lower, self.upper = int(params["lower_us"]), int(params["upper_us"])
        # An output row's left time is above ``watermark + lower`` and its right time above ``watermark - upper``
        # (a new partner arrives after the watermark), so the watermark passed on is held back by the larger of
        # the two, as Flink's interval join does: a time operator after the join gets its rows on time.
        self.watermark_delay = max(-self.lower, self.upper, 0)

    def _outer(self, side: int) -> bool:
        return self.kind == "full" or self.kind == ("left", "right")[side]

    def _padded(self, side: int, row: tuple) -> tuple:
        nulls = (None,) * len(self.fields[1 - side])
        return row + nulls if side == LEFT else nulls + row

    def process(self, table: pa.Table) -> pa.Table | None:
        out = [] if self.kind == "inner" else [self._padded(side, row) for side, row in self._null_keyed(table)
                                                if self._outer(side)]
        for _, kg, key, side, ts, row in self._rows(table, self.times):
            self.backend.set_current_key(kg, key)
            state = self.backend.read("rows", None) or {LEFT: [], RIGHT: []}
            matched = False
            for entry in state[1 - side]:
                other_ts, other = entry[0], entry[1]
                left_ts, right_ts = (ts, other_ts) if side == LEFT else (other_ts, ts)
                if self.lower <= left_ts - right_ts <= self.upper:
                    out.append(row + other if side == LEFT else other + row)
                    entry[2], matched = True, True
            state[side].append([ts, row, matched])
            self.backend.write("rows", state)
        return self._table(out)

    def _null_keyed(self, table: pa.Table):
        """(side, row) of the rows whose join key has a NULL (they join nothing)."""
        columns = {n: changelog.column_values(table, n) for n in set(self.fields[0] + self.fields[1])}
        for i, side in enumerate(table.column(SIDE).to_pylist()):
            if None in tuple(columns[k][i] for k in self.keys[side]):
                yield side, tuple(columns[n][i] for n in self.fields[side])

    def on_watermark(self, watermark: int) -> pa.Table | None:
        """Forget rows no future row can match (later rows are after the watermark), padding unmatched outer ones."""
        self.watermark = max(self.watermark, watermark)
        out = []
        for kg_key in list(self.backend.values):
            self.backend.set_current_key(*kg_key)
            state = self.backend.read("rows", None)
            for side, alive in ((LEFT, lambda t: t - self.lower >= watermark), (RIGHT, lambda t: t + self.upper >= watermark)):
                gone = [e for e in state[side] if not alive(e[0])]
                out += [self._padded(side, e[1]) for e in gone if not e[2] and self._outer(side)]
                state[side] = [e for e in state[side] if alive(e[0])]
            if state[LEFT] or state[RIGHT]:
                self.backend.write("rows", state)
            else:
                self.backend.clear("rows")
        return self._table(out)


class WindowJoinOperator(TimeJoin):
    """Rows of the same (key, window) from both sides, joined when the watermark closes the window."""

    def __init__(self, params: dict, _udf=None):
        super().__init__(params)
        self.kind = params["kind"]
        self.starts = (params["left_window"][0], params["right_window"][0])
        self.ends = (params["left_window"][1], params["right_window"][1])

    def process(self, table: pa.Table) -> pa.Table | None:
        starts = {side: micros(table, self.starts[side]) for side in (LEFT, RIGHT)}
        for i, kg, key, side, end, row in self._rows(table, self.ends):
            if end - 1 <= self.watermark:
                self.late_records += 1
                continue
            self.backend.set_current_key(kg, key + (starts[side][i], end))
            state = self.backend.read("window", None) or {LEFT: [], RIGHT: []}
            state[side].append(row)
            self.backend.write("window", state)
        return None

    def on_watermark(self, watermark: int) -> pa.Table | None:
        self.watermark = max(self.watermark, watermark)
        out: list[tuple] = []
        for kg, key in list(self.backend.values):
            if key[-1] - 1 > watermark:
                continue
            self.backend.set_current_key(kg, key)
            state = self.backend.read("window", None)
            out += self._join(state)
            self.backend.clear("window")
        return self._table(out)

    def _join(self, state: dict) -> list[tuple]:
        left, right = state[LEFT], state[RIGHT]
        pairs = [a + b for a in left for b in right]
        if not right and self.kind in ("left", "full"):
            pairs += [a + (None,) * len(self.fields[RIGHT]) for a in left]
        if not left and self.kind in ("right", "full"):
            pairs += [(None,) * len(self.fields[LEFT]) + b for b in right]
        return pairs
