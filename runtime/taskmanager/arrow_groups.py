"""Grouping, merging and matching the rows of Arrow tables, with Acero's hash aggregation and hash join.

pyarrow's ``Table.group_by`` and ``Table.join`` reach Acero through ``pyarrow.acero``, whose import also loads
``pyarrow.dataset`` with Parquet and ORC: about 55 MB resident in a TaskManager that reads neither. The same
plans (a table source into an aggregate node or a hash join node) are built here from ``pyarrow._acero``,
where ``pyarrow.acero`` takes them from. Nulls form one group, as in SQL's GROUP BY; groups come out in the
order of their first row (one thread).
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyarrow._acero import AggregateNodeOptions, Declaration, HashJoinNodeOptions, TableSourceNodeOptions

Aggregate = tuple  # (input column, or [] for count_all; hash function without "hash_"; options or None; output name)


def group_by(table: pa.Table, keys: list[str], aggregates: list[Aggregate]) -> pa.Table:
    """One row per distinct value of ``keys``: the keys, then each aggregate under its output name."""
    node = AggregateNodeOptions([(column, f"hash_{fn}", options, name) for column, fn, options, name in aggregates],
                                keys=keys)
    out = Declaration.from_sequence([_source(table), Declaration("aggregate", node)]).to_table(use_threads=False)
    return out.select(keys + [name for *_, name in aggregates])


def regroup(table: pa.Table, keys: list[str], merges: dict[str, str]) -> pa.Table:
    """One row per group of ``keys``, each column of ``merges`` merged by its function (sum, min, max) under
    its own name."""
    return group_by(table, keys, [(column, fn, None, column) for column, fn in merges.items()])


def concat(tables: list[pa.Table | None]) -> pa.Table | None:
    """The rows of ``tables`` (None and empty ones skipped) in one table; columns matched by name and
    widened where types differ (int32 partials next to int64 sums)."""
    present = [t for t in tables if t is not None and t.num_rows]
    if len(present) <= 1:
        return present[0] if present else None
    return pa.concat_tables(present, promote_options="permissive")


def semi_join(table: pa.Table, probe: pa.Table) -> pa.Table:
    """The rows of ``table`` (in its order) whose values in ``probe``'s columns equal one of ``probe``'s rows,
    nulls equal to nulls (as grouping has them; a join's key never matches a null)."""
    left = table.append_column("__row", pa.array(np.arange(table.num_rows)))
    right = probe
    keys = []
    for column in probe.column_names:
        if not (table[column].null_count or probe[column].null_count):
            keys.append(column)
            continue
        flag = f"__null_{column}"  # nulls compare as a value of the column, told apart from it by this flag
        left = left.append_column(flag, pc.is_null(table[column]))
        right = right.append_column(flag, pc.is_null(probe[column]))
        keys.append(flag)
        values = pc.drop_null(pa.chunked_array(table[column].chunks + probe[column].chunks, type=table[column].type))
        if len(values):
            left = _set(left, column, pc.fill_null(left[column], values[0]))
            right = _set(right, column, pc.fill_null(right[column], values[0]))
            keys.append(column)
    join = Declaration("hashjoin", HashJoinNodeOptions("left semi", keys, keys),
                       inputs=[_source(left.select(keys + ["__row"])), _source(right.select(keys))])
    return table.take(np.sort(join.to_table(use_threads=False)["__row"].to_numpy()))


def _source(table: pa.Table) -> Declaration:
    return Declaration("table_source", TableSourceNodeOptions(table))


def _set(table: pa.Table, name: str, values) -> pa.Table:
    return table.set_column(table.schema.get_field_index(name), name, values)
