"""SQL's event-time temporal join: each left row with the version of the right row valid at its time.

As Flink's TemporalRowTimeJoinOperator: per join key, left rows wait until the watermark passes their time;
right rows are versions kept by their time (a later row of the same time replaces the earlier one). When
the watermark passes a left row's time, the row joins the latest version at or before it (a LEFT join pads
it with NULLs when there is none), in the order left rows arrived; then every version older than the
newest one at or before the watermark is forgotten, since later left rows cannot need it. Over a view that
keeps the last row per key (``keep_last``), a right row older than its key's newest version is no version
at all, as that deduplication drops it. Both inputs arrive tagged with ``__side`` like the other joins'.
"""
from __future__ import annotations

import bisect

import pyarrow as pa

from runtime.keygroups import KEY_GROUP_COLUMN
from runtime.taskmanager import changelog
from runtime.taskmanager.join_operator import LEFT, RIGHT, SIDE
from runtime.taskmanager.time_join_operator import TimeJoin, micros


class TemporalJoinOperator(TimeJoin):
    def __init__(self, params: dict, _udf=None):
        super().__init__(params)
        self.kind: str = params["kind"]
        self.times = (params["left_time"], params["right_time"])
        self.keep_last = bool(params.get("keep_last"))

    def process(self, table: pa.Table) -> pa.Table | None:
        changelog.learn_types(self.types, table)
        columns = {n: changelog.column_values(table, n) for n in set(self.fields[LEFT] + self.fields[RIGHT])}
        stamps = {side: micros(table, self.times[side]) for side in (LEFT, RIGHT)}
        sides, groups = table.column(SIDE).to_pylist(), table.column(KEY_GROUP_COLUMN).to_pylist()
        for i, (side, kg) in enumerate(zip(sides, groups)):
            key = tuple(columns[k][i] for k in self.keys[side])
            ts = stamps[side][i]
            if ts is None or (side == RIGHT and None in key):  # a NULL key is no version of anything
                continue
            self.backend.set_current_key(kg, key)
            state = self.backend.read("temporal", None) or {"left": [], "right": {}, "latest": None}
            row = tuple(columns[n][i] for n in self.fields[side])
            if side == LEFT:
                state["left"].append((ts, row))
            elif not (self.keep_last and state["latest"] is not None and ts < state["latest"]):
                state["right"][ts] = row
                state["latest"] = ts if state["latest"] is None else max(state["latest"], ts)
            self.backend.write("temporal", state)
        return None

    def on_watermark(self, watermark: int) -> pa.Table | None:
        """Join the left rows the watermark passed, in arrival order; forget versions no later row can need."""
        out: list[tuple] = []
        nulls = (None,) * len(self.fields[RIGHT])
        for kg_key in list(self.backend.values):
            self.backend.set_current_key(*kg_key)
            state = self.backend.read("temporal", None)
            versions = sorted(state["right"])
            for ts, row in [e for e in state["left"] if e[0] <= watermark]:
                at = bisect.bisect_right(versions, ts) - 1
                if at >= 0:
                    out.append(row + state["right"][versions[at]])
                elif self.kind == "left":
                    out.append(row + nulls)
            state["left"] = [e for e in state["left"] if e[0] > watermark]
            for old in versions[:max(0, bisect.bisect_right(versions, watermark) - 1)]:
                del state["right"][old]
            self.backend.write("temporal", state)
        return self._table(out)
