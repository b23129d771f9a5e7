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
