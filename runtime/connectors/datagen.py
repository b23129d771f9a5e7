"""datagen: a deterministic generated stream, read natively in Spark.

Options (``params``): ``schema`` (DDL string, required), ``number_of_rows`` (bounded when set),
``rows_per_second`` (whole-job rate; unlimited when unset), ``seed``, ``fields`` (per-column
``kind`` random|sequence, ``min``/``max``, ``values``, ``cardinality``, ``prefix``, ``start``,
``max_out_of_orderness`` in seconds for timestamps), ``timestamp_start`` (epoch seconds of offset 0)
and ``event_rate`` (offsets per event-time second; defaults to ``rows_per_second``).

Subtask ``i`` of ``p`` reads global offsets ``i, i+p, i+2p, ...``; row values are a pure function of
(seed, column, offset), so the stream can be replayed exactly from any offset.
"""
from __future__ import annotations

import math

from runtime.connectors.base import ConnectorError, SourceReader, source


def datagen_params(schema: str, number_of_rows: int | None = None, rows_per_second: float | None = None,
                   seed: int = 0, fields: dict | None = None, timestamp_start: float | None = None,
                   event_rate: float | None = None) -> dict:
    """Client side: validate and package the options of a datagen source."""
    if not isinstance(schema, str) or not schema.strip():
        raise ConnectorError("datagen needs a schema, e.g. 'user INT, amount DOUBLE, ts TIMESTAMP'")
    if number_of_rows is not None and (not isinstance(number_of_rows, int) or number_of_rows < 0):
        raise ConnectorError(f"datagen number_of_rows must be a non-negative integer, got {number_of_rows!r}")
    if rows_per_second is not None and rows_per_second <= 0:
        raise ConnectorError(f"datagen rows_per_second must be positive, got {rows_per_second!r}")
    params = {"connector": "datagen", "schema": schema, "seed": int(seed), "fields": dict(fields or {})}
    for key, value in (("number_of_rows", number_of_rows), ("rows_per_second", rows_per_second),
                       ("timestamp_start", timestamp_start), ("event_rate", event_rate)):
        if value is not None:
            params[key] = value
    return params


@source("datagen")
class DatagenReader(SourceReader):
    def __init__(self, ctx):
        super().__init__(ctx)
        params = ctx.params
        total = params.get("number_of_rows")
        p, i = ctx.parallelism, ctx.subtask_index
        self.bounded = total is not None
        self.local_total = None if total is None else max(0, math.ceil((total - i) / p))
        rate = params.get("rows_per_second")
        self.local_rate = None if rate is None else float(rate) / p
        self.next_local = 0

    def rows_allowed_now(self, elapsed_s: float) -> int | None:
        if self.local_rate is None:
            return None
        return int(elapsed_s * self.local_rate)

    def next_bundle(self, max_rows: int):
        """The next at most ``max_rows`` rows as a Spark DataFrame (blocking), how many, and whether input is done."""
        if self.local_total is not None:
            max_rows = min(max_rows, self.local_total - self.next_local)
        if max_rows <= 0:
            return None, 0, self.bounded
        p, i = self.ctx.parallelism, self.ctx.subtask_index
        start = i + self.next_local * p
        end = i + (self.next_local + max_rows) * p
        df = self.ctx.spark.datagen(self.ctx.params, start, end, p)
        self.next_local += max_rows
        finished = self.local_total is not None and self.next_local >= self.local_total
        return df, max_rows, finished

    def snapshot(self) -> dict:
        return {"next_local": self.next_local, "subtask": self.ctx.subtask_index, "parallelism": self.ctx.parallelism}

    def restore(self, state: dict) -> None:
        self.next_local = int(state["next_local"])
