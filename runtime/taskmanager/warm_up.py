"""What a fresh Spark session runs while no job needs it yet: one small bundle along the path most jobs' bundles
take, so that the JVM's one-time work is done before a job waits for it.

A fresh JVM's first bundle costs several times a later one (on two cores: about 3.9 CPU seconds for a clicks
source's first bundle against 0.4 for its next ones): it loads Spark's SQL parser, analyzer and optimizer,
generates and compiles code, starts the first Spark job and Arrow's transfer, and the JIT has compiled none of it.
Paid by a job's first bundle, that cost delayed its first windows by seconds (tens of seconds on a loaded
machine), held its first checkpoint behind that bundle, and showed the task as busy ("limits this job") for the
span its busy time is averaged over. The warm-up pays it while the session waits for work (the TaskManager
runs it when no job took its slots as soon as the session was up), through the same code a job runs
(runtime.taskmanager.chain, the datagen source's SQL, runtime.taskmanager.spark): a source chain as clicks and
SQL's TUMBLE make it (generated rows, a watermark folded into a per-key window pre-aggregate, a filter, key
groups for the exchange, Arrow out), then a window task that merges the result, fires, and runs a selection
over the fired rows in Spark (Arrow in and out again). A job's own first bundle still compiles the code of its
own expressions, which costs far less with all of this loaded and compiled.

Blocking: runs on a thread of the TaskManager's pool, once per session; tasks placed meanwhile wait for it.
"""
from __future__ import annotations

import pyarrow as pa

from runtime.jobgraph import OperatorSpec
from runtime.messages import OutputDescriptor
from runtime.taskmanager.chain import OperatorChain
from runtime.taskmanager.spark import SparkRunner
from runtime.taskmanager.window_operator import END_OF_TIME

SCHEMA = "user INT, url STRING, amount DOUBLE, ts TIMESTAMP"
ROWS = 64
MAX_PARALLELISM = 128
WINDOW = {"type": "tumbling", "size_us": 1_000_000, "slide_us": 1_000_000}
AGGREGATES = [{"name": "clicks", "fn": "count", "column": None}, {"name": "total", "fn": "sum", "column": "amount"}]
SOURCE = {"connector": "datagen", "schema": SCHEMA, "seed": 1, "timestamp_start": 0.0, "event_rate": 64.0,
          "fields": {"user": {"min": 0, "max": 7}, "url": {"cardinality": 4, "prefix": "/"},
                     "amount": {"min": 0.0, "max": 1.0}}}
WINDOWED = {"keys": ["user"], "window": WINDOW, "aggregates": AGGREGATES, "ts_column": "ts", "allowed_lateness_us": 0}


def _op(kind: str, **params) -> OperatorSpec:
    return OperatorSpec(f"warm-up-{kind}", f"warm-up {kind}", kind, 1, params)


def source_chain() -> OperatorChain:
    """The source task's chain of the clicks job and of SQL's TUMBLE query, keyed for its window task."""
    ops = [_op("watermark", ts_column="ts", lag_us=0, idle_us=None), _op("filter", condition="amount > 0.1"),
           _op("window_combine", **WINDOWED, follows_input=True)]
    return OperatorChain.build(ops, [OutputDescriptor("warm-up-window", "hash", ["user"], 1)], MAX_PARALLELISM)


def window_chain() -> OperatorChain:
    """A window task that passes what it fires through a selection in Spark, as SQL's window queries do."""
    ops = [_op("window_aggregate", **WINDOWED), _op("select", exprs=["window_end", "`user`", "clicks", "total"])]
    return OperatorChain.build(ops, [], MAX_PARALLELISM)


def warm_up(spark: SparkRunner) -> pa.Table:
    """One bundle through a source chain and the window task after it, on ``spark``'s session; the rows the
    window fired. Raises if none came out: a warm-up that fired nothing did not take the path it is for."""
    source, window = source_chain(), window_chain()
    combined = source.process(spark, spark.datagen_ranges(SOURCE, [(0, ROWS, 1)]))
    if combined is None:
        raise RuntimeError("the warm-up's source chain kept no rows")
    window.process(spark, combined)
    fired = window.on_watermark(spark, END_OF_TIME)
    if not fired:
        raise RuntimeError("the warm-up's window fired no rows")
    return pa.concat_tables(fired)
