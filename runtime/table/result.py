"""Results of SQL statements, with PyFlink's names: TableResult and its row iterator (Row and RowKind,
from runtime.changelog, are re-exported here as PyFlink's pyflink.table module has them)."""
from __future__ import annotations

from runtime.changelog import Row, RowKind, rows_of
from runtime.sql.display import tableau

__all__ = ["CloseableIterator", "Row", "RowKind", "TableResult", "rows_of"]


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
        """Stop reading; a query job still running is cancelled (as closing PyFlink's iterator does)."""
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
        """The executor's StatementResult behind this TableResult."""
        return self._result

    def get_job_client(self):
        """The JobClient of the statement's job, or None for a statement that runs no job."""
        return self._result.job

    def get_result_kind(self) -> str:
        """SUCCESS_WITH_CONTENT when there are rows (a query, SHOW, EXPLAIN), else SUCCESS."""
        return "SUCCESS_WITH_CONTENT" if self._result.kind in ("rows", "job", "explain") else "SUCCESS"

    def get_column_names(self) -> list[str]:
        """The result's column names."""
        return list(self._result.columns)

    def is_updating(self) -> bool:
        """True when the rows form a changelog with retractions (-U/-D), not only inserts."""
        return self._result.updating

    def wait(self, timeout_ms: float | None = None) -> None:
        """Block until the statement's job ends (at most ``timeout_ms``); returns at once without a job."""
        if self._result.job is not None:
            self._result.job.wait(None if timeout_ms is None else timeout_ms / 1000)

    def collect(self) -> CloseableIterator:
        """The rows as a closeable iterator; a running query's rows arrive as the job produces them."""
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
        if self._result.kind == "explain":
            print(self._result.text)
            return
        if self._result.kind == "job" and self._result.fields:
            rows = list(self.collect())
            print(tableau(self._result.columns, rows, changelog=True))
            return
        print(tableau(self._result.columns, [Row(list(r), self._result.columns) for r in self._rows()]))
