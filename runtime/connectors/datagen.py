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

As a SQL table (``'connector' = 'datagen'``) it takes Flink's options: ``rows-per-second``,
``number-of-rows``, ``fields.<f>.kind|start|end|min|max|length``, plus this runtime's ``seed``,
``timestamp-start``, ``event-rate`` and ``fields.<f>.values|cardinality|max-out-of-orderness|max-past|prefix``.

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

from runtime.config_values import parse_duration
from runtime.connectors.base import Connector, ConnectorError, SourceReader
from runtime.connectors.table_options import (ConfigOption, TableFactory, TableOptionError, TableSpec,
                                              physical_schema, read_option)

TIMESTAMP_COLUMN = re.compile(r"\bTIMESTAMP", re.I)
DEFAULT_SPLITS = 12  # divisible by 1, 2, 3, 4 and 6: even shares at the parallelisms people try here
DEFAULT_ROWS_PER_SECOND = 10_000  # Flink's datagen default
FIELD_OPTIONS = {"kind", "start", "end", "min", "max", "length", "values", "cardinality", "max-out-of-orderness",
                 "max-past", "prefix", "null-rate"}


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


ROWS_PER_SECOND = ConfigOption("rows-per-second", float, float(DEFAULT_ROWS_PER_SECOND))
NUMBER_OF_ROWS = ConfigOption("number-of-rows", int)
SEED = ConfigOption("seed", int, 0)
TIMESTAMP_START = ConfigOption("timestamp-start", float, description="epoch seconds of the first row")
EVENT_RATE = ConfigOption("event-rate", float, description="rows per event-time second")


class DatagenTableFactory(TableFactory):
    """``'connector' = 'datagen'``: Flink's datagen options into the datagen source's params."""
    identifier = "datagen"
    optional = (ROWS_PER_SECOND, NUMBER_OF_ROWS, SEED, TIMESTAMP_START, EVENT_RATE)

    def extra_option(self, table: TableSpec, key: str) -> bool:
        """``fields.<column>.<option>``: the column must exist and the option be one datagen knows."""
        parts = key.split(".")
        if len(parts) != 3 or parts[0] != "fields":
            return False
        if table.column(parts[1]) is None:
            raise TableOptionError(f"table {table.name!r}: option {key!r} names no column {parts[1]!r}")
        if parts[2] not in FIELD_OPTIONS:
            raise TableOptionError(f"table {table.name!r}: unsupported option {key!r} "
                                   f"(fields.<name>.{{{', '.join(sorted(FIELD_OPTIONS))}}})")
        return True

    def source_params(self, table: TableSpec, runtime_mode: str) -> dict:
        """Rates, rows and per-field kinds and bounds; a sequence with an end bounds the stream, as in Flink."""
        options = table.options
        fields, rows = {}, self.get(table, NUMBER_OF_ROWS)
        for column in table.physical:
            spec = {k.split(".")[2]: v for k, v in options.items() if k.startswith(f"fields.{column.name}.")}
            fields[column.name] = _field_spec(table, column, spec)
            if spec.get("kind") == "sequence" and "end" in spec:
                length = _field(table, column, spec, "end", int) - _field(table, column, spec, "start", int, 0) + 1
                rows = length if rows is None else min(rows, length)
        params = {"connector": "datagen", "schema": physical_schema(table), "seed": self.get(table, SEED),
                  "fields": fields, "rows_per_second": self.get(table, ROWS_PER_SECOND)}
        if rows is not None:
            params["number_of_rows"] = rows
        for option, name in ((TIMESTAMP_START, "timestamp_start"), (EVENT_RATE, "event_rate")):
            if option.key in options:
                params[name] = self.get(table, option)
        return {**params, **_near_now(params)}


def _near_now(params: dict) -> dict:
    """Flink's datagen stamps rows with the time they are generated: without 'timestamp-start' event time starts
    now (planning time, kept in the job so that a replay generates the same rows) and, without 'event-rate'
    either, follows the wall clock (each row released when its time comes), so watermarks lag by seconds. A table
    without a TIMESTAMP column has no event time to stamp."""
    if "timestamp_start" in params or not TIMESTAMP_COLUMN.search(params["schema"]):
        return {}
    if "event_rate" in params:
        return {"timestamp_start": time.time(), "timestamp_start_now": True}
    return realtime_params()


def _field_spec(table: TableSpec, column, spec: dict) -> dict:
    out: dict = {}
    kind = spec.get("kind", "random")
    if kind not in ("random", "sequence"):
        raise TableOptionError(f"table {table.name!r}: fields.{column.name}.kind must be 'random' or 'sequence'")
    out["kind"] = kind
    for key in ("min", "max", "start", "cardinality", "length"):
        if key in spec:
            out[key] = _field(table, column, spec, key, float if column.type in ("DOUBLE", "FLOAT") else int)
    if "values" in spec:
        out["values"] = [v.strip() for v in spec["values"].split(",")]
    if "prefix" in spec:
        out["prefix"] = spec["prefix"]
    for key in ("max-out-of-orderness", "max-past"):  # Flink's max-past: timestamps up to that far back from now
        if key in spec:
            out["max_out_of_orderness"] = _field(table, column, spec, key, parse_duration)
    return out


def _field(table: TableSpec, column, spec: dict, name: str, parse, default=None):
    """The per-field option ``fields.<column>.<name>`` read by ``parse``, or ``default`` when it is not set."""
    if name not in spec:
        return default
    return read_option(table.name, f"fields.{column.name}.{name}", spec[name], parse)


CONNECTOR = Connector("datagen", reader=DatagenReader, table=DatagenTableFactory())
