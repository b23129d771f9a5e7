"""A sink's incoming changelog as the changes to write: for an upsert sink one row per key, the last change
winning, with its operation (upsert or delete; -U rows are skipped, as Flink's upsert sink skips them);
for an append sink the rows as they came. Arrow only, no step per row."""
from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from runtime.changelog import DELETE, INSERT, OP_COLUMN, UPDATE_BEFORE

OP = "fb_op"  # the operation column of staged upserts: INSERT (upsert) or DELETE
DELETE_OP = DELETE
_INDEX = "__row"


def concat(tables: list[pa.Table]) -> pa.Table | None:
    """The non-empty tables as one (schemas unified), or None."""
    tables = [t for t in tables if t.num_rows]
    return pa.concat_tables(tables, promote_options="default") if tables else None


def changes(tables: list[pa.Table], key: list[str]) -> pa.Table | None:
    """What ``tables`` (in arrival order) amount to: without ``key`` their rows (inserts only, the changelog column
    dropped); with ``key`` one row per key, the last one, and column OP saying upsert or delete."""
    table = concat(tables)
    if table is None:
        return None
    ops = table[OP_COLUMN] if OP_COLUMN in table.column_names else pa.chunked_array([pa.nulls(table.num_rows, pa.int8())])
    table = table.drop_columns([OP_COLUMN]) if OP_COLUMN in table.column_names else table
    if not key:
        return table
    kinds = pc.fill_null(pc.cast(ops, pa.int8()), INSERT)
    table = table.append_column(OP, pc.if_else(pc.equal(kinds, DELETE), DELETE, INSERT).cast(pa.int16()))
    table = table.filter(pc.not_equal(kinds, UPDATE_BEFORE))
    table = table.append_column(_INDEX, pa.array(range(table.num_rows), pa.int64()))
    last = table.group_by(key, use_threads=False).aggregate([(_INDEX, "max")])[f"{_INDEX}_max"]
    return table.take(pc.take(last, pc.sort_indices(last))).drop_columns([_INDEX])
