"""Changelog rows, below every layer that uses them: row kinds, PyFlink's Row, applying a changelog.

An updating SQL result (a non-windowed GROUP BY, Top-N, an outer join) is a changelog: each row carries
its kind in column ``__op`` — INSERT (+I), UPDATE_BEFORE (-U), UPDATE_AFTER (+U), DELETE (-D), Flink's
RowKind — through exchanges, collect and sinks. Applying the changelog in order (+I/+U add a row, -U/-D
remove one) gives the table the query describes. Rows without the column are inserts.

The SQL planner, the Table API, the display helpers, connectors and the TaskManager's operators all
import these from here; this module imports nothing of Flinkbench, so no import runs back up.
"""
from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Iterable
from typing import Any

OP_COLUMN = "__op"
INSERT, UPDATE_BEFORE, UPDATE_AFTER, DELETE = 0, 1, 2, 3
SHORT = {INSERT: "+I", UPDATE_BEFORE: "-U", UPDATE_AFTER: "+U", DELETE: "-D"}
NAMES = {INSERT: "INSERT", UPDATE_BEFORE: "UPDATE_BEFORE", UPDATE_AFTER: "UPDATE_AFTER", DELETE: "DELETE"}


class RowKind(enum.Enum):
    """The kind of a changelog row, with PyFlink's names and values."""
    INSERT = INSERT
    UPDATE_BEFORE = UPDATE_BEFORE
    UPDATE_AFTER = UPDATE_AFTER
    DELETE = DELETE

    def short_string(self) -> str:
        """+I, -U, +U or -D, as Flink prints the kind."""
        return SHORT[self.value]


class Row(tuple):
    """A result row: a tuple whose fields can also be read by name, with its RowKind."""

    def __new__(cls, values, names: list[str], kind: RowKind = RowKind.INSERT):
        row = super().__new__(cls, values)
        row._names, row._kind = list(names), kind
        return row

    def get_row_kind(self) -> RowKind:
        """The row's kind (INSERT for rows of an insert-only result)."""
        return self._kind

    def set_row_kind(self, kind: RowKind) -> None:
        """Change the row's kind, as PyFlink's Row allows."""
        self._kind = kind

    def get_fields_by_names(self, names: list[str]) -> list:
        """The values of the named fields, in that order; KeyError for an unknown name."""
        return [self[n] for n in names]

    def as_dict(self) -> dict[str, Any]:
        """The row as {field name: value}."""
        return dict(zip(self._names, self))

    def __getitem__(self, item):
        if isinstance(item, str):
            try:
                return tuple.__getitem__(self, self._names.index(item))
            except ValueError:
                raise KeyError(item) from None
        return tuple.__getitem__(self, item)

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def __repr__(self) -> str:
        return f"{self._kind.short_string()}[{', '.join(repr(v) for v in self)}]"


def is_addition(op: int) -> bool:
    """+I and +U add a row to the result; -U and -D take one away."""
    return op in (INSERT, UPDATE_AFTER)


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


def materialize(rows: list[Row]) -> list[Row]:
    """The table a changelog of Rows describes (+I/+U add, -U/-D remove), in first-seen order."""
    kept = apply((r.get_row_kind().value, tuple(r)) for r in rows)
    names = rows[0]._names if rows else []
    return [Row(list(values), names) for values in kept]


def rows_of(table) -> list[Row]:
    """The Rows of an Arrow table of results (its ``__op`` column giving each row's kind)."""
    names = [n for n in table.column_names if n != OP_COLUMN]
    kinds = table.column(OP_COLUMN).to_pylist() if OP_COLUMN in table.column_names else [INSERT] * table.num_rows
    values = table.select(names).to_pylist()
    return [Row([r[n] for n in names], names, RowKind(k if k is not None else INSERT)) for r, k in zip(values, kinds)]
