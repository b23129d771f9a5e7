"""Spark plans of SQL's aggregations: local pre-aggregation, cumulating windows.

A non-windowed GROUP BY over an append-only input sends one partial per key and bundle instead of
every row: ``__records`` (rows), and per aggregate the columns runtime.taskmanager.group_aggregate
merges (count; sum and count of non-null values for SUM and AVG; min; max; a Python aggregate
function's partial accumulator, runtime.taskmanager.spark_udf_plans). Like runtime.taskmanager.spark,
this runs on the task's executor thread.
"""
from __future__ import annotations

from runtime.taskmanager.group_aggregate import RECORDS, partial_names


def local_aggregate(df, params: dict, udafs: dict | None = None):
    """``df`` grouped by ``params['keys']`` into partials; ValueError names a missing column. ``udafs``: the
    Python aggregate functions by aggregate name."""
    from pyspark.sql import functions as F

    from runtime.taskmanager.spark_udf_plans import accumulated, rows_of_group, with_order

    keys, aggs = params["keys"], params["aggregates"]
    needed = keys + [c for a in aggs for c in [a.get("column"), *a.get("args", [])] if c]
    missing = [c for c in needed if c not in df.columns]
    if missing:
        raise ValueError(f"no column {sorted(set(missing))}; available: {df.columns}")
    partials = [F.count(F.lit(1)).alias(RECORDS)]
    for i, spec in enumerate(aggs):
        column = F.col(f"`{spec['column']}`") if spec.get("column") else None
        names = partial_names(i, spec["fn"])
        if spec["fn"] == "udaf":
            partials.append(F.expr(rows_of_group(spec)).alias(names[0]))
        elif spec["fn"] == "count":
            partials.append((F.count(column) if column is not None else F.count(F.lit(1))).alias(names[0]))
        elif spec["fn"] in ("sum", "avg"):
            partials += [F.sum(column).alias(names[0]), F.count(column).alias(names[1])]
        else:
            partials.append(getattr(F, spec["fn"])(column).alias(names[0]))
    grouped = with_order(df, aggs).groupBy(*[F.col(f"`{k}`") for k in keys]).agg(*partials)
    names = {a["name"]: partial_names(i, a["fn"])[0] for i, a in enumerate(aggs)}
    return accumulated(grouped, aggs, udafs or {}, lambda spec: names[spec["name"]])


def cumulate_windows(df, window: dict):
    """One row per cumulating window a row falls in: the same start, ends every step up to the max size."""
    from pyspark.sql import functions as F

    from runtime.taskmanager.window_operator import EVENT_TIME, WINDOW_END, WINDOW_START

    size, step = window["size_us"], window["step_us"]
    start = F.col(EVENT_TIME) - F.expr(f"pmod({EVENT_TIME}, {size}L)")
    first = F.floor((F.col(EVENT_TIME) - F.col(WINDOW_START)) / F.lit(step)) + 1
    ends = F.expr(f"sequence(CAST(__first AS BIGINT), {size // step}L)")
    return (df.withColumn(WINDOW_START, start).withColumn("__first", first)
              .withColumn(WINDOW_END, F.explode(ends)).drop("__first")
              .withColumn(WINDOW_END, F.col(WINDOW_START) + F.col(WINDOW_END) * F.lit(step)))
