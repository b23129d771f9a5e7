"""Spark plans of SQL's local (pre-)aggregation: per bundle, before the hash exchange.

A non-windowed GROUP BY over an append-only input sends one partial per key and bundle instead of
every row: ``__records`` (rows), and per aggregate the columns runtime.taskmanager.group_aggregate
merges (count; sum and count of non-null values for SUM and AVG; min; max). Like
runtime.taskmanager.spark, this runs on the task's executor thread.
"""
from __future__ import annotations

from runtime.taskmanager.group_aggregate import RECORDS, partial_names


def local_aggregate(df, params: dict):
    """``df`` grouped by ``params['keys']`` into partials; ValueError names a missing column."""
    from pyspark.sql import functions as F

    keys, aggs = params["keys"], params["aggregates"]
    needed = keys + [a["column"] for a in aggs if a.get("column")]
    missing = [c for c in needed if c not in df.columns]
    if missing:
        raise ValueError(f"no column {sorted(set(missing))}; available: {df.columns}")
    partials = [F.count(F.lit(1)).alias(RECORDS)]
    for i, spec in enumerate(aggs):
        column = F.col(f"`{spec['column']}`") if spec.get("column") else None
        names = partial_names(i, spec["fn"])
        if spec["fn"] == "count":
            partials.append((F.count(column) if column is not None else F.count(F.lit(1))).alias(names[0]))
        elif spec["fn"] in ("sum", "avg"):
            partials += [F.sum(column).alias(names[0]), F.count(column).alias(names[1])]
        else:
            partials.append(getattr(F, spec["fn"])(column).alias(names[0]))
    return df.groupBy(*[F.col(f"`{k}`") for k in keys]).agg(*partials)
