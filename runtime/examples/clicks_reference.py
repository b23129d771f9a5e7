"""The clicks job's answer computed as a plain Spark batch query: what ``make demo`` and the tests check
the streaming job against.

The datagen expressions are a pure function of the row offset, so the same rows can be generated again
in one batch and grouped by user and window with Spark's own ``window``. Kept apart from
runtime/examples/clicks.py so that building the job never imports pyspark; this module imports it when
called.
"""
from __future__ import annotations

from collections.abc import Iterable

import pyarrow as pa

from runtime.examples.clicks import SCHEMA, WINDOW, source_options


def expected(spark, rows: int, **options) -> pa.Table:
    """Per-(user, window) clicks and their total amount over the first ``rows`` generated clicks, as Arrow;
    ``options`` as for runtime.examples.clicks.source_options."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import StructType

    from runtime.taskmanager.datagen_sql import generate

    params = {"schema": SCHEMA, **{k: v for k, v in source_options(rows, **options).items() if v is not None}}
    df = generate(spark, StructType.fromDDL(SCHEMA), params, [(0, rows, 1)])
    query = df.filter("amount > 0.1").groupBy("user", F.window("ts", WINDOW.replace(" s", " seconds"))).agg(
        F.count(F.lit(1)).alias("clicks"), F.sum("amount").alias("total"))
    return query.selectExpr("user", "window.start AS window_start", "window.end AS window_end",
                            "clicks", "total").toArrow()


def comparable(rows: pa.Table | Iterable[dict]) -> list[tuple]:
    """The clicks job's output as sorted (user, window_start, window_end, clicks, total) tuples: sums rounded, so
    float addition order does not matter, and window bounds without a time zone, so Arrow's UTC timestamps and
    Spark's session-time ones (read back from CSV) compare."""
    rows = rows.to_pylist() if isinstance(rows, pa.Table) else rows
    return sorted((r["user"], r["window_start"].replace(tzinfo=None), r["window_end"].replace(tzinfo=None),
                   r["clicks"], round(r["total"], 6)) for r in rows)
