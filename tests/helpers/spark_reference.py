"""Reference answers computed by a plain Spark batch query, to check streaming jobs against."""
from __future__ import annotations

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
