"""Changelog rows as Arrow: the row kind column SQL's updating operators add to the bundles they emit.

The row kinds themselves (``__op``: +I/-U/+U/-D, Flink's RowKind) and applying a changelog live in
runtime.changelog, below both the SQL layer and the TaskManager; this module holds what the operators
need on top: kinds of an Arrow bundle, and rows with their kinds back into Arrow.
"""
from __future__ import annotations

import pyarrow as pa

from runtime.changelog import DELETE, INSERT, NAMES, OP_COLUMN, SHORT, UPDATE_AFTER, UPDATE_BEFORE, apply, is_addition

__all__ = ["DELETE", "INSERT", "NAMES", "OP_COLUMN", "OP_TYPE", "SHORT", "UPDATE_AFTER", "UPDATE_BEFORE", "apply",
           "column_values", "is_addition", "learn_types", "ops_of", "rows_table", "typed_rows_table"]

OP_TYPE = pa.int8()


def ops_of(table: pa.Table) -> list[int]:
    """The kind of each row of a bundle (all INSERT when it has no ``__op`` column)."""
    if OP_COLUMN not in table.column_names:
        return [INSERT] * table.num_rows
    return table.column(OP_COLUMN).to_pylist()


def rows_table(rows: list[tuple], ops: list[int], schema: pa.Schema) -> pa.Table | None:
    """Rows (tuples in ``schema``'s column order) with their kinds as one Arrow table; None if empty."""
    if not rows:
        return None
    columns = list(zip(*rows))
    arrays = [pa.array(list(values), type=f.type) for values, f in zip(columns, schema)]
    return pa.Table.from_arrays(arrays + [pa.array(ops, OP_TYPE)], names=schema.names + [OP_COLUMN])


def column_values(table: pa.Table, name: str) -> list:
    """A column's values, or NULLs when the bundle has no such column (rows of the other join input only)."""
    return table.column(name).to_pylist() if name in table.column_names else [None] * table.num_rows


def learn_types(types: dict[str, pa.DataType], table: pa.Table) -> None:
    """Remember the Arrow type of every column ``table`` has (null-typed columns tell nothing)."""
    for field in table.schema:
        if not pa.types.is_null(field.type):
            types[field.name] = field.type


def typed_rows_table(names: list[str], rows: list[tuple], ops: list[int] | None,
                     types: dict[str, pa.DataType]) -> pa.Table | None:
    """Rows as Arrow with the types seen so far (a column never seen is inferred from its values)."""
    if not rows:
        return None
    columns = list(zip(*rows))
    arrays = [pa.array(list(v), type=types.get(n)) if n in types else pa.array(list(v)) for n, v in zip(names, columns)]
    if ops is None:
        return pa.Table.from_arrays(arrays, names=names)
    return pa.Table.from_arrays(arrays + [pa.array(ops, OP_TYPE)], names=names + [OP_COLUMN])
