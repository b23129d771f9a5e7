"""The JobMaster side of push sources: per source, an append-only log of pushed rows, read by offset.

Clients append batches over REST (each row gets the next offset) and close the source when they are
done; source subtasks read their share with FetchPushedRows over their control connection (see
runtime.connectors.push for which subtask owns which offsets and why positions make replay exact).
The rows stay in memory for the job's life, since a restored subtask may read any of them again.
Runs on the JobManager's loop.
"""
from __future__ import annotations

import bisect
import secrets

import pyarrow as pa

from runtime.arrow_ipc import table_to_b64
from runtime.connectors.push import conform, push_schema, table_of
from runtime.jobgraph import JobGraph
from runtime.jobmanager.snapshots import PushSourceSnapshot
from runtime.messages import FetchPushedRows, PushedRows

FETCH_MAX_ROWS = 100_000
FETCH_MAX_BYTES = 8 * 1024 * 1024  # one reply stays far below the control connection's message limit


class UnknownSource(KeyError):
    def __init__(self, source: str, known: list[str]):
        super().__init__(source)
        self.source, self.known = source, known

    def __str__(self) -> str:
        return f"push source {self.source!r} not found; this job's push sources: {self.known or 'none'}"


class SourceRefused(ValueError):
    """A request the source cannot take in its state (closed) or as named (ambiguous)."""


class PushLog:
    """The rows pushed into one push source, in offset order."""

    def __init__(self, source_id: str, name: str, schema: str):
        self.source_id, self.name, self.ddl = source_id, name, schema
        self.schema = push_schema(schema, name)
        self.epoch = secrets.token_hex(8)  # tells this log from another job's: positions count in one log
        self.total_rows = 0
        self.closed = False
        self._chunks: list[pa.Table] = []
        self._starts: list[int] = []  # offset of each chunk's first row
        self._bytes = 0

    def append(self, rows) -> tuple[int, int]:
        """Check ``rows`` against the schema and append all or none of them; the offsets they got."""
        if self.closed:
            raise SourceRefused(f"push source {self.name!r} is closed and takes no more rows")
        table = conform(table_of(rows, self.name, self.schema), self.schema, self.name)
        first = self.total_rows
        if table.num_rows:
            self._chunks.append(table)
            self._starts.append(first)
            self.total_rows += table.num_rows
            self._bytes += table.nbytes
        return first, self.total_rows

    def close(self) -> None:
        self.closed = True

    def read(self, subtask: int, parallelism: int, position: int, max_rows: int) -> tuple[pa.Table | None, int]:
        """The rows at offsets ``o >= position`` with ``o % parallelism == subtask`` (at most ``max_rows``,
        in offset order) and the position after them."""
        first = position + (subtask - position) % parallelism
        owned = max(0, -(-(self.total_rows - first) // parallelism))
        take = min(owned, max_rows, self._row_budget())
        if take == owned:
            after = max(position, self.total_rows)
        else:
            after = first + take * parallelism
        return (self._rows_at(first, take, parallelism) if take else None), after

    def finished_at(self, position: int) -> bool:
        return self.closed and position >= self.total_rows

    def _row_budget(self) -> int:
        per_row = self._bytes / self.total_rows if self.total_rows else 1
        return max(1, min(FETCH_MAX_ROWS, int(FETCH_MAX_BYTES / max(per_row, 1))))

    def _rows_at(self, first: int, count: int, step: int) -> pa.Table:
        last = first + (count - 1) * step
        lo = bisect.bisect_right(self._starts, first) - 1
        hi = bisect.bisect_right(self._starts, last)
        base = self._starts[lo]
        window = pa.concat_tables(self._chunks[lo:hi])
        return window.take(pa.array(range(first - base, last - base + 1, step), pa.int64()))

    def snapshot(self) -> PushSourceSnapshot:
        return PushSourceSnapshot(self.source_id, self.name, self.ddl, self.total_rows, self.closed)


class PushLogs:
    """The push sources of one job, found by operator id or by name."""

    def __init__(self, graph: JobGraph):
        self.logs = {op.id: PushLog(op.id, op.name, op.params.get("schema"))
                     for op in graph.operators if op.kind == "source" and op.params.get("connector") == "push"}

    def find(self, source: str) -> PushLog:
        """The log of the push source with this operator id or name; UnknownSource, or SourceRefused
        when several have the name."""
        if source in self.logs:
            return self.logs[source]
        named = [log for log in self.logs.values() if log.name == source]
        if len(named) > 1:
            raise SourceRefused(f"{len(named)} push sources are named {source!r}; use an operator id: "
                                f"{[log.source_id for log in named]}")
        if not named:
            raise UnknownSource(source, [f"{log.name} ({log.source_id})" for log in self.logs.values()])
        return named[0]

    def fetch(self, msg: FetchPushedRows) -> PushedRows:
        """A source subtask's next rows; an error reply for a source or share that does not exist."""
        log = self.logs.get(msg.source_id)
        if log is None:
            return PushedRows(msg.request_id, error=f"the job has no push source {msg.source_id!r}")
        if msg.parallelism < 1 or not 0 <= msg.subtask_index < msg.parallelism or msg.position < 0:
            return PushedRows(msg.request_id, error=f"subtask {msg.subtask_index} of {msg.parallelism} at "
                                                    f"position {msg.position} is not a share of the log")
        position = msg.position if msg.epoch == log.epoch else 0
        table, position = log.read(msg.subtask_index, msg.parallelism, position, msg.max_rows)
        return PushedRows(msg.request_id, log.epoch, position, table.num_rows if table is not None else 0,
                          table_to_b64(table) if table is not None else None, log.finished_at(position))

    def snapshots(self) -> list[PushSourceSnapshot]:
        return [log.snapshot() for log in self.logs.values()]
