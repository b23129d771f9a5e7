"""datagen: a deterministic generated stream, read natively in Spark.

Options (``params``): ``schema`` (DDL string, required), ``number_of_rows`` (bounded when set),
``rows_per_second`` (whole-job rate; unlimited when unset), ``seed``, ``fields`` (per-column
``kind`` random|sequence, ``min``/``max``, ``values``, ``cardinality``, ``prefix``, ``start``,
``max_out_of_orderness`` in seconds for timestamps), ``timestamp_start`` (epoch seconds of offset 0)
and ``event_rate`` (offsets per event-time second; defaults to ``rows_per_second``).

Event time near now, as Flink's datagen stamps rows: ``realtime=True``, and a paced stream
(``rows_per_second``) with a TIMESTAMP column and neither ``timestamp_start`` nor ``event_rate``, start
event time when the job is built and follow the wall clock (each row released when its time comes). A
job restored from a snapshot of such a source keeps the start of the run it continues, so its rows are
the same and due at once rather than a whole earlier run later.

The offsets are cut into ``splits`` (default 12) interleaved splits: split ``j`` holds offsets
``j, j+S, j+2S, ...``. Subtask ``i`` of ``p`` reads the splits ``j`` with ``j % p == i`` and its
snapshot records each split's progress, so a job restored at another parallelism hands the splits
to their new owners. Row values are a pure function of (seed, column, offset), so the stream replays
exactly from any snapshot.
"""
from __future__ import annotations

import math
import re
import time

from runtime.connectors.base import ConnectorError, SourceReader, source

TIMESTAMP_COLUMN = re.compile(r"\bTIMESTAMP", re.I)
DEFAULT_SPLITS = 12  # divisible by 1, 2, 3, 4 and 6: even shares at the parallelisms people try here


def datagen_params(schema: str, number_of_rows: int | None = None, rows_per_second: float | None = None,
                   seed: int = 0, fields: dict | None = None, timestamp_start: float | None = None,
                   event_rate: float | None = None, realtime: bool = False) -> dict:
    """Client side: validate and package the options of a datagen source."""
    if not isinstance(schema, str) or not schema.strip():
        raise ConnectorError("datagen needs a schema, e.g. 'user INT, amount DOUBLE, ts TIMESTAMP'")
    if number_of_rows is not None and (not isinstance(number_of_rows, int) or number_of_rows < 0):
        raise ConnectorError(f"datagen number_of_rows must be a non-negative integer, got {number_of_rows!r}")
    if rows_per_second is not None and rows_per_second <= 0:
        raise ConnectorError(f"datagen rows_per_second must be positive, got {rows_per_second!r}")
    params = {"connector": "datagen", "schema": schema, "seed": int(seed), "fields": dict(fields or {})}
    if realtime and rows_per_second is None:
        raise ConnectorError("datagen realtime=True needs rows_per_second")
    paced_event_time = rows_per_second is not None and timestamp_start is None and event_rate is None and \
        TIMESTAMP_COLUMN.search(schema) is not None
    if realtime or paced_event_time:  # event time is wall-clock time: rows are released when their timestamp comes
        params.update(realtime_params(timestamp_start))
        timestamp_start, event_rate = params["timestamp_start"], rows_per_second
    for key, value in (("number_of_rows", number_of_rows), ("rows_per_second", rows_per_second),
                       ("timestamp_start", timestamp_start), ("event_rate", event_rate)):
        if value is not None:
            params[key] = value
    return params


def realtime_params(timestamp_start: float | None = None) -> dict:
    """Params of a source whose event time follows the wall clock from ``timestamp_start`` (default: now, marked
    so that a restored run keeps the start of the run it continues)."""
    if timestamp_start is not None:
        return {"realtime": True, "timestamp_start": timestamp_start}
    return {"realtime": True, "timestamp_start": time.time(), "timestamp_start_now": True}


@source("datagen")
class DatagenReader(SourceReader):
    """Reads the splits this subtask owns, least advanced first, each bundle as one Spark plan."""

    def __init__(self, ctx):
        super().__init__(ctx)
        params = ctx.params
        self.total = params.get("number_of_rows")
        self.bounded = self.total is not None
        self.num_splits = int(params.get("splits") or DEFAULT_SPLITS)
        p, i = ctx.parallelism, ctx.subtask_index
        self.splits = {j: 0 for j in range(self.num_splits) if j % p == i}  # split -> rows read from it
        rate = params.get("rows_per_second")
        self.rate = None if rate is None else float(rate) * len(self.splits) / self.num_splits
        self._restored_rows = 0
        if params.get("realtime"):
            self.max_burst_s = None

    def split_rows(self, split: int) -> int | None:
        if self.total is None:
            return None
        return max(0, math.ceil((self.total - split) / self.num_splits))

    def _remaining(self, split: int) -> int | None:
        rows = self.split_rows(split)
        return None if rows is None else rows - self.splits[split]

    def rows_allowed_now(self, elapsed_s: float) -> int | None:
        if self.rate is not None and self.ctx.params.get("realtime"):
            # rows whose event time has come, however late the task started
            elapsed_s = time.time() - float(self.ctx.params["timestamp_start"]) - self._restored_rows / self.rate
        return super().rows_allowed_now(elapsed_s)

    def next_bundle(self, max_rows: int):
        """The next at most ``max_rows`` rows as a Spark DataFrame (blocking), how many, and whether input is done."""
        open_splits = [j for j in self.splits if self._remaining(j) != 0]
        if not open_splits or max_rows <= 0:
            return None, 0, self.bounded and not open_splits
        level = min(self.splits[j] for j in open_splits)
        behind = [j for j in open_splits if self.splits[j] == level][:max_rows]  # never more rows than asked
        per_split = max(1, max_rows // len(behind))
        ahead = [self.splits[j] for j in open_splits if self.splits[j] > level]
        if ahead:
            per_split = min(per_split, min(ahead) - level)  # catch up to the next level, then read together
        ranges = []
        for j in behind:
            remaining = self._remaining(j)
            take = per_split if remaining is None else min(per_split, remaining)
            ranges.append((j, level, level + take))
            self.splits[j] += take
        df = self.ctx.spark.datagen_ranges(self.ctx.params, _merge_ranges(ranges, self.num_splits))
        read = sum(hi - lo for _, lo, hi in ranges)
        finished = self.bounded and all(self._remaining(j) == 0 for j in self.splits)
        return df, read, finished

    def snapshot(self) -> dict:
        return {"splits": {str(j): n for j, n in self.splits.items()}, "num_splits": self.num_splits,
                "timestamp_start": self.ctx.params.get("timestamp_start")}

    def restore(self, states: list[dict]) -> None:
        """Take the progress of the splits this subtask owns now, from whichever old subtask had them."""
        for state in states:
            if int(state.get("num_splits", self.num_splits)) != self.num_splits:
                raise ConnectorError(f"source '{self.ctx.operator_name}': the snapshot has "
                                     f"{state.get('num_splits')} splits, this job {self.num_splits}")
            for split, rows in state.get("splits", {}).items():
                if int(split) in self.splits:
                    self.splits[int(split)] = int(rows)
            if self.ctx.params.get("timestamp_start_now") and state.get("timestamp_start") is not None:
                self.ctx.params = {**self.ctx.params, "timestamp_start": float(state["timestamp_start"])}
        self._restored_rows = sum(self.splits.values())


def _merge_ranges(ranges: list[tuple[int, int, int]], num_splits: int) -> list[tuple[int, int, int]]:
    """Offset ranges (start, end, step) covering the given split rows; splits evenly spaced at the same
    level collapse into one range, the common case of a subtask reading all its splits in step."""
    splits = sorted(j for j, _, _ in ranges)
    same_level = len({(lo, hi) for _, lo, hi in ranges}) == 1
    if same_level and len(splits) > 1:
        step = splits[1] - splits[0]
        if all(b - a == step for a, b in zip(splits, splits[1:])) and step * len(splits) == num_splits:
            _, lo, hi = ranges[0]
            return [(splits[0] + lo * num_splits, splits[0] + hi * num_splits, step)]
    return [(j + lo * num_splits, j + hi * num_splits, num_splits) for j, lo, hi in ranges]
