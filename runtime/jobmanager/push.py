"""The JobMaster side of push sources: per source, an append-only log of pushed rows, read by offset.

Clients append batches over REST (each row gets the next offset) and close the source when they are
done; source subtasks read their share with FetchPushedRows over their control connection (see
runtime.connectors.push for which subtask owns which offsets and why positions make replay exact).

With high availability every batch (and the close) is written to the HA storage before the push is
answered, so a new leader serves the same log with the same epoch, and restored positions still count
in it. The log is trimmed below the oldest offset a retained checkpoint restores a subtask to: no
failover reads those rows again (a job started from a savepoint has a log of its own, from 0). Writes
are synchronous on the JobManager's loop, so nothing after a push is processed before it is durable.
Runs on the JobManager's loop.
"""
from __future__ import annotations

import asyncio
import bisect
import logging
import re
import secrets
from collections.abc import Callable
from typing import TYPE_CHECKING

import pyarrow as pa

from runtime.arrow_ipc import table_from_ipc, table_to_b64, table_to_ipc
from runtime.checkpoint import storage
from runtime.checkpoint.fencing import WriteFence, run_fenced
from runtime.checkpoint.storage import StorageError
from runtime.errors import ClusterError
from runtime.connectors.push import PushError, conform, push_schema, table_of
from runtime.jobgraph import JobGraph
from runtime.snapshots import PushSourceSnapshot
from runtime.messages import FetchPushedRows, PushedRows

if TYPE_CHECKING:
    from runtime.checkpoint.coordinator import CompletedCheckpoint

log = logging.getLogger(__name__)

FETCH_MAX_ROWS = 100_000
FETCH_MAX_BYTES = 8 * 1024 * 1024  # one reply stays far below the control connection's message limit
PUSH_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")  # it becomes part of a file name in the HA storage


class UnknownSource(KeyError):
    def __init__(self, source: str, known: list[str]):
        super().__init__(source)
        self.source, self.known = source, known

    def __str__(self) -> str:
        return f"push source {self.source!r} not found; this job's push sources: {self.known or 'none'}"


class SourceRefused(ValueError):
    """A request the source cannot take in its state (closed) or as named (ambiguous)."""


class PushNotKept(ClusterError):
    """The HA storage did not keep a push or a close: nothing was taken, and the client may retry."""


def _kept(url: str, data: bytes) -> None:
    try:
        storage.write_durably(url, data)
    except StorageError as err:
        raise PushNotKept(f"not taken: the HA storage did not keep it: {err}") from None


class PushLog:
    """The rows pushed into one push source, in offset order; kept in the HA storage when ``directory``
    is given, each batch written before it is taken (runtime.checkpoint.storage.write_durably)."""

    def __init__(self, source_id: str, name: str, schema: str, directory: str | None = None,
                 on_append: Callable[[], None] = lambda: None):
        self.source_id, self.name, self.ddl = source_id, name, schema
        self.on_append = on_append
        self.schema = push_schema(schema, name)
        self.directory = directory
        self.epoch = secrets.token_hex(8)  # tells this log from another job's: positions count in one log
        self.total_rows = 0
        self.first_offset = 0  # rows before it were trimmed: no retained checkpoint reads them again
        self.closed = False
        self._chunks: list[pa.Table] = []
        self._starts: list[int] = []  # offset of each chunk's first row
        self._push_ids: list[str | None] = []  # the client's id of each chunk's push, if it named one
        self._taken: dict[str, tuple[int, int]] = {}  # push id -> offsets, while its chunk is kept
        self._bytes = 0
        if directory:
            self._load()

    def append(self, rows, push_id: str | None = None) -> tuple[int, int]:
        """Check ``rows`` against the schema and append all or none of them; the offsets they got.
        A push the client names (``push_id``) is taken once: a retry of it returns the first offsets.
        With HA storage the batch is written first: StorageError (nothing taken) if it cannot be."""
        if push_id is not None and not PUSH_ID.fullmatch(str(push_id)):
            raise PushError(f"push to source {self.name!r}: push_id must be 1-64 letters, digits, '-' or '_'")
        if push_id in self._taken:
            return self._taken[push_id]
        if self.closed:
            raise SourceRefused(f"push source {self.name!r} is closed and takes no more rows")
        table = conform(table_of(rows, self.name, self.schema), self.schema, self.name)
        first = self.total_rows
        if table.num_rows:
            if self.directory:
                _kept(storage.join(self.directory, _chunk_name(first, push_id)), table_to_ipc(table))
            self._take(first, table, push_id)
            self.on_append()
        return first, self.total_rows

    def close(self) -> None:
        if self.directory and not self.closed:
            _kept(storage.join(self.directory, "closed"), b"")
        self.closed = True

    def trim(self, before: int) -> list[str]:
        """Forget the whole batches below offset ``before``; the files to delete (the caller does, off the loop)."""
        gone = []
        while self._chunks and self._starts[0] + self._chunks[0].num_rows <= before:
            chunk, start, push_id = self._chunks.pop(0), self._starts.pop(0), self._push_ids.pop(0)
            self._bytes -= chunk.nbytes
            self._taken.pop(push_id, None)  # type: ignore[arg-type]
            gone.append(_chunk_name(start, push_id))
        self.first_offset = self._starts[0] if self._starts else self.total_rows
        return [storage.join(self.directory, name) for name in gone] if self.directory else []

    def _take(self, first: int, table: pa.Table, push_id: str | None) -> None:
        self._chunks.append(table)
        self._starts.append(first)
        self._push_ids.append(push_id)
        self.total_rows = first + table.num_rows
        self._bytes += table.nbytes
        if push_id is not None:
            self._taken[push_id] = (first, self.total_rows)

    def _load(self) -> None:
        """Take over the log a previous leader kept (or start it): its epoch, batches and closed mark."""
        names = storage.finished_names(self.directory)
        if "epoch" in names:
            self.epoch = storage.read_bytes(storage.join(self.directory, "epoch")).decode()
        else:
            storage.write_durably(storage.join(self.directory, "epoch"), self.epoch.encode())
        batches = sorted(n for n in names if n.endswith(".arrow"))
        for name in batches:
            first_text, _, push_id = name[:-len(".arrow")].partition(".")
            first = int(first_text)
            if self._chunks and first != self.total_rows:
                raise StorageError(f"push log {self.directory} has a gap before offset {first}")
            self._take(first, table_from_ipc(storage.read_bytes(storage.join(self.directory, name))), push_id or None)
        self.first_offset = self._starts[0] if self._starts else 0
        self.total_rows = max(self.total_rows, self.first_offset)
        self.closed = "closed" in names

    def read(self, subtask: int, parallelism: int, position: int, max_rows: int) -> tuple[pa.Table | None, int]:
        """The rows at offsets ``o >= position`` with ``o % parallelism == subtask`` (at most ``max_rows``,
        in offset order) and the position after them."""
        first = position + (subtask - position) % parallelism
        if first < self.first_offset:
            raise SourceRefused(f"push source {self.name!r}: rows before offset {self.first_offset} were trimmed "
                                f"(no retained checkpoint needs them), position {position} is older")
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


def _chunk_name(first: int, push_id: str | None) -> str:
    return f"{first:015d}.{push_id}.arrow" if push_id else f"{first:015d}.arrow"


class PushLogs:
    """The push sources of one job, found by operator id or by name.

    ``retained`` gives the job's retained checkpoints: after each push, once a newer one is retained,
    every log is trimmed below the oldest offset those checkpoints' source subtasks restore to.
    """

    def __init__(self, graph: JobGraph, data_dir: str | None = None,
                 retained: Callable[[], list[CompletedCheckpoint]] = list, fence: WriteFence | None = None):
        self.logs = {op.id: PushLog(op.id, op.name, op.params.get("schema"),
                                    storage.join(data_dir, "push", op.id) if data_dir else None, self.after_push)
                     for op in graph.operators if op.kind == "source" and op.params.get("connector") == "push"}
        self._retained = retained
        self.fence = fence  # guards the trimming deletions (in threads)
        self._trimmed_for: int | None = None  # the oldest retained checkpoint at the last trim
        self._trimming = False
        self._positions: dict[str, tuple[str, int]] = {}  # state pointer -> (epoch, position)

    def after_push(self) -> None:
        """Trim in the background if the oldest retained checkpoint changed since the last trim."""
        retained = list(self._retained())
        if self._trimming or not retained or retained[0].checkpoint_id == self._trimmed_for:
            return
        self._trimming = True
        asyncio.get_running_loop().create_task(self._trim(retained))

    async def _trim(self, retained: list[CompletedCheckpoint]) -> None:
        loop = asyncio.get_running_loop()
        try:
            points = await loop.run_in_executor(None, self._trim_points, retained)
            gone = [url for source_id, point in points.items() for url in self.logs[source_id].trim(point)]
            self._trimmed_for = retained[0].checkpoint_id
            for url in gone:
                await loop.run_in_executor(None, run_fenced, self.fence, storage.remove, url)
        except Exception as err:  # noqa: BLE001 - unreadable snapshots or storage: trim next time
            log.warning("cannot trim the push logs: %s", err)
        finally:
            self._trimming = False

    def _trim_points(self, retained: list[CompletedCheckpoint]) -> dict[str, int]:
        """Per source, the oldest offset any retained checkpoint restores a subtask to (blocking: reads
        the subtasks' snapshots). A snapshot of another log (epoch) restores to 0."""
        points = {}
        for source_id, push_log in self.logs.items():
            restore_to = []
            for checkpoint in retained:
                subtasks = [s for s in checkpoint.subtasks if source_id in s.operators]
                restore_to.append(min((self._position(s.pointer, push_log.epoch) for s in subtasks), default=0))
            points[source_id] = min(restore_to, default=0)
        return points

    def _position(self, pointer: str, epoch: str) -> int:
        if pointer not in self._positions:
            source = storage.read_json(storage.join(pointer, "state.json")).get("source") or {}
            self._positions[pointer] = (str(source.get("epoch", "")), int(source.get("position", 0)))
        found_epoch, position = self._positions[pointer]
        return position if found_epoch == epoch else 0

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
        try:
            table, position = log.read(msg.subtask_index, msg.parallelism, position, msg.max_rows)
        except SourceRefused as err:
            return PushedRows(msg.request_id, error=str(err))
        return PushedRows(msg.request_id, log.epoch, position, table.num_rows if table is not None else 0,
                          table_to_b64(table) if table is not None else None, log.finished_at(position))

    def snapshots(self) -> list[PushSourceSnapshot]:
        return [log.snapshot() for log in self.logs.values()]
