"""Results of SQL statements, with PyFlink's names: Row, RowKind, TableResult and its row iterator."""
from __future__ import annotations

import enum
from typing import Any

from runtime.taskmanager.changelog import OP_COLUMN


class RowKind(enum.Enum):
    INSERT = 0
    UPDATE_BEFORE = 1
    UPDATE_AFTER = 2
    DELETE = 3

    def short_string(self) -> str:
        return {0: "+I", 1: "-U", 2: "+U", 3: "-D"}[self.value]


class Row(tuple):
    """A result row: a tuple whose fields can also be read by name, with its RowKind."""

    def __new__(cls, values, names: list[str], kind: RowKind = RowKind.INSERT):
        row = super().__new__(cls, values)
        row._names, row._kind = list(names), kind
        return row

    def get_row_kind(self) -> RowKind:
        return self._kind

    def set_row_kind(self, kind: RowKind) -> None:
        self._kind = kind

    def get_fields_by_names(self, names: list[str]) -> list:
        return [self[n] for n in names]

    def as_dict(self) -> dict[str, Any]:
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


def rows_of(table) -> list[Row]:
    """The Rows of an Arrow table of results (its ``__op`` column giving each row's kind)."""
    names = [n for n in table.column_names if n != OP_COLUMN]
    kinds = table.column(OP_COLUMN).to_pylist() if OP_COLUMN in table.column_names else [0] * table.num_rows
    values = table.select(names).to_pylist()
    return [Row([r[n] for n in names], names, RowKind(k if k is not None else 0)) for r, k in zip(values, kinds)]


class CloseableIterator:
    """``with result.collect() as rows: for row in rows: ...``; closing a running query's iterator cancels it."""

    def __init__(self, job, poll: float = 0.2):
        self._job = job
        self._pages = job.iter_results(poll=poll, offset=0) if job is not None else iter(())
        self._buffer: list[Row] = []
        self._closed = False

    def __iter__(self) -> CloseableIterator:
        return self

    def __next__(self) -> Row:
        while not self._buffer:
            if self._closed:
                raise StopIteration
            self._buffer = rows_of(next(self._pages))
        return self._buffer.pop(0)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._job is not None and self._job.status() not in ("FINISHED", "FAILED", "CANCELED"):
            self._job.cancel()

    def __enter__(self) -> CloseableIterator:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class TableResult:
    """What ``execute_sql`` returns: a job's handle and rows, or the rows/message of a client statement."""

    def __init__(self, result):
        self._result = result

    @property
    def result(self):
        return self._result

    def get_job_client(self):
        return self._result.job

    def get_result_kind(self) -> str:
        return "SUCCESS_WITH_CONTENT" if self._result.kind in ("rows", "job", "explain") else "SUCCESS"

    def get_column_names(self) -> list[str]:
        return list(self._result.columns)

    def is_updating(self) -> bool:
        return self._result.updating

    def wait(self, timeout_ms: float | None = None) -> None:
        if self._result.job is not None:
            self._result.job.wait(None if timeout_ms is None else timeout_ms / 1000)

    def collect(self) -> CloseableIterator:
        if self._result.kind == "job" and self._result.fields:
            return CloseableIterator(self._result.job)
        it = CloseableIterator(None)
        it._buffer = [Row(list(r), self._result.columns) for r in self._rows()]
        return it

    def _rows(self) -> list[tuple]:
        if self._result.kind == "explain":
            return [(self._result.text,)]
        if self._result.kind == "ok":
            return [("OK",)]
        return self._result.rows

    def print(self) -> None:
        """Print the rows as the SQL client's tableau mode does (a running query prints until it ends)."""
        from runtime.sql.display import tableau

        if self._result.kind == "explain":
            print(self._result.text)
            return
        if self._result.kind == "job" and self._result.fields:
            rows = list(self.collect())
            print(tableau(self._result.columns, rows, changelog=True))
            return
        print(tableau(self._result.columns, [Row(list(r), self._result.columns) for r in self._rows()]))
