"""Reference answers computed by a plain Spark batch query, to check streaming jobs against."""
from __future__ import annotations

from collections.abc import Iterable

import pyarrow as pa

from runtime.examples.clicks import SCHEMA, WINDOW, source_options


def clicks_expected(spark, rows: int, **options):
    """runtime.examples.clicks' per-(user, window) counts and sums from a plain Spark batch query, as an
    Arrow table."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import StructType

    from runtime.taskmanager.datagen_sql import generate

    params = {"schema": SCHEMA, **{k: v for k, v in source_options(rows, **options).items() if v is not None}}
    df = generate(spark, StructType.fromDDL(SCHEMA), params, [(0, rows, 1)])
    query = df.filter("amount > 0.1").groupBy("user", F.window("ts", WINDOW.replace(" s", " seconds"))).agg(
        F.count(F.lit(1)).alias("clicks"), F.sum("amount").alias("total"))
    return query.selectExpr("user", "window.start AS window_start", "window.end AS window_end",
                            "clicks", "total").toArrow()


def clicks_rows(rows: pa.Table | Iterable[dict]) -> list[tuple]:
    """The clicks job's output as sorted (user, window_start, window_end, clicks, total) tuples: sums rounded, so
    float addition order does not matter, and window bounds without a time zone, so Arrow's UTC timestamps and
    Spark's session-time ones (read back from CSV) compare."""
    rows = rows.to_pylist() if isinstance(rows, pa.Table) else rows
    return sorted((r["user"], r["window_start"].replace(tzinfo=None), r["window_end"].replace(tzinfo=None),
                   r["clicks"], round(r["total"], 6)) for r in rows)


def assert_clicks_exact(spark, got: pa.Table, rows: int, **options) -> None:
    """``got`` is exactly what the clicks job over ``rows`` generated rows must give: nothing lost or repeated."""
    expected = clicks_expected(spark, rows, **options)
    assert got.num_rows == expected.num_rows > 0, f"{got.num_rows} windows, Spark's answer has {expected.num_rows}"
    assert clicks_rows(got) == clicks_rows(expected), "nothing lost, nothing duplicated"
