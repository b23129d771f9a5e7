"""Changelog rows: the row kind column SQL's updating operators add to the rows they emit.

An updating result (a non-windowed GROUP BY, Top-N, an outer join) is a changelog: each row carries
its kind in column ``__op`` — INSERT (+I), UPDATE_BEFORE (-U), UPDATE_AFTER (+U), DELETE (-D), Flink's
RowKind — through exchanges, collect and sinks. Applying the changelog in order (+I/+U add a row,
-U/-D remove one) gives the table the query describes. Rows without the column are inserts.
"""
from __future__ import annotations

from collections import Counter
from typing import Any
from collections.abc import Iterable

import pyarrow as pa

OP_COLUMN = "__op"
INSERT, UPDATE_BEFORE, UPDATE_AFTER, DELETE = 0, 1, 2, 3
SHORT = {INSERT: "+I", UPDATE_BEFORE: "-U", UPDATE_AFTER: "+U", DELETE: "-D"}
NAMES = {INSERT: "INSERT", UPDATE_BEFORE: "UPDATE_BEFORE", UPDATE_AFTER: "UPDATE_AFTER", DELETE: "DELETE"}
OP_TYPE = pa.int8()


def is_addition(op: int) -> bool:
    """+I and +U add a row to the result; -U and -D take one away."""
    return op in (INSERT, UPDATE_AFTER)


def ops_of(table: pa.Table) -> list[int]:
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


def apply(rows: Iterable[tuple[int, Any]]) -> list[Any]:
    """The table a changelog describes: (kind, row) pairs applied in order; rows must be hashable.

    Raises ValueError when a -U or -D removes a row that is not there (an incorrect changelog)."""
    present: Counter = Counter()
    order: dict[Any, int] = {}
    for i, (op, row) in enumerate(rows):
        if is_addition(op):
            present[row] += 1
            order.setdefault(row, i)
        elif present[row] > 0:
            present[row] -= 1
        else:
            raise ValueError(f"changelog row {i} ({SHORT.get(op, op)} {row!r}) retracts a row that is not there")
    return [row for row in sorted(present, key=order.get) for _ in range(present[row])]


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
