"""The reference job "clicks", shared by the demo, the tests, the benchmark and the notebooks.

Generated click events (user in [0, 10000), url, amount, event-time ts) -> filter amount > 0.1 ->
key by user -> 10 s tumbling event-time windows with a 1 s watermark lag -> count and sum.

runtime/examples/clicks_reference.py computes the same answer as a plain Spark batch query over the same
generated rows (the datagen expressions are a pure function of the offset), which is how tests check
it; this module stays free of pyspark, which only TaskManagers (runtime.taskmanager.spark) import.
"""
from __future__ import annotations

from runtime.api.functions import col
from runtime.api.windows import TumblingEventTimeWindows, WatermarkStrategy, agg

SCHEMA = "user INT, url STRING, amount DOUBLE, ts TIMESTAMP"
USERS = 10_000
WINDOW = "10 s"
LAG = "1 s"
TIMESTAMP_START = 1_700_000_000.0


def source_options(rows: int | None, rows_per_second: float | None = None, event_rate: float = 10_000.0,
                   seed: int = 7, out_of_orderness: float = 0.0, realtime: bool = False, users: int = USERS) -> dict:
    """Datagen options: ``event_rate`` rows per event-time second, optionally jittered back in time;
    ``realtime`` makes event time wall-clock time (for latency measurements)."""
    if realtime:
        return dict(number_of_rows=rows, rows_per_second=rows_per_second, seed=seed, realtime=True,
                    fields=_fields(out_of_orderness, users))
    return dict(number_of_rows=rows, rows_per_second=rows_per_second, seed=seed, fields=_fields(out_of_orderness, users),
                timestamp_start=TIMESTAMP_START, event_rate=event_rate)


def _fields(out_of_orderness: float, users: int) -> dict:
    fields = {"user": {"min": 0, "max": users - 1}, "url": {"cardinality": 500, "prefix": "/page/"},
              "amount": {"min": 0.0, "max": 1.0}}
    if out_of_orderness:
        fields["ts"] = {"max_out_of_orderness": out_of_orderness}
    return fields


def watermarks() -> WatermarkStrategy:
    return WatermarkStrategy.for_bounded_out_of_orderness(LAG).with_timestamp_column("ts")


def windows() -> TumblingEventTimeWindows:
    return TumblingEventTimeWindows.of(WINDOW)


def source(env, rows: int | None, **options):
    """The generated click events as a stream of ``env`` (options: see source_options)."""
    return env.datagen(SCHEMA, name="Source: clicks", **source_options(rows, **options))


def counts(clicks):
    """The pipeline after the source: per user and 10 s event-time window, clicks and their total amount."""
    return (clicks
            .assign_timestamps_and_watermarks(watermarks())
            .filter(col("amount") > 0.1)
            .key_by("user")
            .window(windows())
            .aggregate(clicks=agg.count(), total=agg.sum("amount")))


def build(env, rows: int | None, sink: str = "collect", **options):
    """Add the clicks pipeline to ``env``; returns the windowed stream before the sink."""
    counted = counts(source(env, rows, **options))
    if sink == "collect":
        counted.collect()
    elif sink == "blackhole":
        counted.blackhole()
    return counted


def sql(rows: int | None = None, sink: str = "blackhole", event_rate: float = 10_000.0,
        rows_per_second: float | None = None, path: str | None = None) -> list[str]:
    """The same pipeline as Flink SQL: a datagen table with the same generated rows, a sink table, and a
    TUMBLE query (``sink`` is blackhole, print or filesystem, the last under ``path``)."""
    limit = f"'number-of-rows' = '{rows}', " if rows is not None else ""
    rate = rows_per_second or 1_000_000_000  # Flink's datagen has a rate; this one is too high to matter
    source = (f"CREATE TABLE clicks (`user` INT, url STRING, amount DOUBLE, ts TIMESTAMP(3), "
              f"WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH ('connector' = 'datagen', {limit}"
              f"'rows-per-second' = '{rate:g}', 'seed' = '7', 'timestamp-start' = '{TIMESTAMP_START:g}', "
              f"'event-rate' = '{event_rate:g}', 'fields.user.min' = '0', 'fields.user.max' = '{USERS - 1}', "
              "'fields.url.cardinality' = '500', 'fields.url.prefix' = '/page/', "
              "'fields.amount.min' = '0.0', 'fields.amount.max' = '1.0')")
    options = f"'connector' = 'filesystem', 'path' = '{path}', 'format' = 'csv'" if sink == "filesystem" else \
        f"'connector' = '{sink}'"
    target = (f"CREATE TABLE counts (`user` INT, window_start TIMESTAMP(3), window_end TIMESTAMP(3), clicks BIGINT, "
              f"total DOUBLE) WITH ({options})")
    query = ("INSERT INTO counts SELECT `user`, window_start, window_end, COUNT(*) AS clicks, SUM(amount) AS total "
             "FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '10' SECOND)) WHERE amount > 0.1 "
             "GROUP BY window_start, window_end, `user`")
    return [source, target, query]
