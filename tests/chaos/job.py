"""The chaos run's job: a keyed stream with per-key sequence numbers into the exactly-once Parquet sink.

Input row ``i`` (a datagen sequence) becomes key ``i % keys`` with sequence number ``i // keys``; a
keyed process function counts each key's rows in keyed state and emits ``(key, seq, count)``. The
input is paced (tests.helpers.pacing) while the faults go on, so that it outlasts them, and read at full
speed once the run lifts the pace. The Parquet sink publishes a checkpoint's rows only once it completes.
"""
from __future__ import annotations

import sys

import cloudpickle
import pyarrow.dataset as ds

from runtime.api import KeyedProcessFunction, ValueStateDescriptor
from tests.helpers.pacing import Pace

cloudpickle.register_pickle_by_value(sys.modules[__name__])  # TaskManagers need not import the tests

SCHEMA = "key BIGINT, seq BIGINT, count BIGINT"
SOURCE_PARALLELISM = 2  # a pace's rate is per source subtask


class RunningCount(KeyedProcessFunction):
    """Emit every row with its key's running count, kept in keyed state (checkpointed, restored)."""

    def open(self, ctx):
        self.count = ctx.get_state(ValueStateDescriptor("count", 0))

    def process_element(self, row, ctx, out):
        self.count.update(self.count.value() + 1)
        out.collect((row["key"], row["seq"], self.count.value()))


def build(env, out: str, rows: int, keys: int, pace: Pace, parallelism: int = 3, checkpoint_interval: str = "1 s") -> None:
    """The job on ``env``: source (and ``pace``) at SOURCE_PARALLELISM, the keyed counter and the sink at
    ``parallelism``."""
    env.set_parallelism(SOURCE_PARALLELISM)
    env.enable_checkpointing(checkpoint_interval)
    (env.datagen("i BIGINT", name="Source: sequence", number_of_rows=rows, fields={"i": {"kind": "sequence"}})
        .map(pace, schema="i BIGINT")
        .with_columns(key=f"i % {keys}", seq=f"i DIV {keys}")
        .key_by("key")
        .process(RunningCount(), schema=SCHEMA).set_parallelism(parallelism)
        .write_parquet(out))


def committed_columns(out: str) -> tuple[list[int], list[int], list[int]]:
    """The (key, seq, count) columns the sink published under ``out`` (its staging area excluded)."""
    table = ds.dataset(out, format="parquet").to_table(columns=["key", "seq", "count"])
    return tuple(table.column(c).to_pylist() for c in ("key", "seq", "count"))  # type: ignore[return-value]
