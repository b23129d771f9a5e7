"""The JobManager side of the collect sink: rows from sink subtasks, buffered for the client.

Clients read by offset (``GET /jobs/<id>/results?offset=N``), so several readers and reconnects
work. Memory is bounded: beyond ``max_rows`` the oldest rows are dropped and counted.

With high availability the buffer also keeps every delivery as an Arrow file in the job's HA storage
(runtime.ha.services.HaServices.job_data_dir, any fsspec URL), named by its first row's offset (and its sink, subtask and
checkpoint), so a new leader that resumes the job rebuilds the same offsets and the same
de-duplication, and clients read on. The write is synchronous on the JobManager's loop: a delivery is
durable before it can be read and before anything the TaskManagers sent after it is processed (an
acknowledgement that completes the next checkpoint in particular), so a successor that restores the
latest published checkpoint either has the delivery or gets it re-sent by the restored sink. A
delivery that cannot be written is refused, not recorded as delivered, and the job fails over to its
latest checkpoint, whose restored sinks send it again.
"""
from __future__ import annotations

from collections.abc import Callable

import pyarrow as pa

from runtime.arrow_ipc import table_from_b64, table_from_ipc, table_to_ipc
from runtime.checkpoint.fencing import FencedOut
from runtime.checkpoint import storage
from runtime.checkpoint.storage import StorageError
from runtime.messages import CollectResult

DEFAULT_MAX_ROWS = 2_000_000


class CollectBuffer:
    """The rows a job's collect sinks delivered, kept for the client with offsets and de-duplication per checkpoint."""
    def __init__(self, max_rows: int = DEFAULT_MAX_ROWS, data_dir: str | None = None,
                 on_unkept: Callable[[str], None] | None = None):
        self.max_rows = max_rows
        self.on_unkept = on_unkept  # a delivery the HA storage did not keep: the job must fail over
        self.persist_dir = storage.join(data_dir, "results") if data_dir else None
        self._tables: list[tuple[int, pa.Table]] = []  # (offset of first row, rows)
        self.total_rows = 0
        self.dropped_rows = 0
        self.finished = False
        self.schema: pa.Schema | None = None
        self._delivered: set[tuple[str, int, int]] = set()  # (sink, subtask, checkpoint id)
        self._files: dict[int, str] = {}  # offset of a kept delivery -> its file (high availability)
        if self.persist_dir:
            self._load()

    def add(self, msg: CollectResult) -> None:
        """Append a delivery; one committed by a checkpoint is taken once however often it is re-sent."""
        key = (msg.sink_id, msg.subtask_index, msg.checkpoint_id) if msg.checkpoint_id is not None else None
        if key in self._delivered:
            return
        table = table_from_b64(msg.arrow_b64)
        self.schema = self.schema or table.schema
        if table.num_rows and self.persist_dir:
            try:
                self._persist(self.total_rows, msg, table)
            except FencedOut:  # this JobManager lost the leadership: the sink re-sends it to the new leader
                return
            except StorageError as err:  # refused, not marked delivered: the restored sink re-sends it
                if self.on_unkept is None:
                    raise
                self.on_unkept(f"cannot keep collected rows in the HA storage: {err}")
                return
        if key is not None:
            self._delivered.add(key)
        if table.num_rows == 0:
            return
        self._tables.append((self.total_rows, table))
        self.total_rows += table.num_rows
        self._evict()

    def _evict(self) -> None:
        held = self.total_rows - self.dropped_rows
        while self._tables and held - self._tables[0][1].num_rows >= self.max_rows:
            offset, table = self._tables.pop(0)
            self.dropped_rows += table.num_rows
            held -= table.num_rows
            if offset in self._files:
                storage.remove(self._files.pop(offset))

    # -- kept for a successor (high availability) -----------------------------------------------
    def _persist(self, offset: int, msg: CollectResult, table: pa.Table) -> None:
        checkpoint = "none" if msg.checkpoint_id is None else msg.checkpoint_id
        url = storage.join(self.persist_dir, f"{offset:015d}.{msg.subtask_index}.{checkpoint}.{msg.sink_id}.arrow")
        storage.write_durably(url, table_to_ipc(table))
        self._files[offset] = url

    def _load(self) -> None:
        """Rebuild offsets and de-duplication from what the previous leader kept."""
        for name in sorted(n for n in storage.finished_names(self.persist_dir) if n.endswith(".arrow")):
            offset, subtask, checkpoint, sink = name[:-len(".arrow")].split(".", 3)
            table = table_from_ipc(storage.read_bytes(storage.join(self.persist_dir, name)))
            if checkpoint != "none":
                self._delivered.add((sink, int(subtask), int(checkpoint)))
            if not self._tables:
                self.dropped_rows = int(offset)
            self.schema = self.schema or table.schema
            self._tables.append((int(offset), table))
            self._files[int(offset)] = storage.join(self.persist_dir, name)
            self.total_rows = int(offset) + table.num_rows

    def finish(self) -> None:
        self.finished = True

    def read(self, offset: int, limit: int) -> tuple[pa.Table | None, int]:
        """Rows from ``offset`` (at most ``limit``) and the offset to ask for next."""
        offset = max(offset, self.dropped_rows)
        pieces, taken = [], 0
        for start, table in self._tables:
            end = start + table.num_rows
            if end <= offset or taken >= limit:
                continue
            lo = max(offset - start, 0)
            piece = table.slice(lo, min(table.num_rows - lo, limit - taken))
            pieces.append(piece)
            taken += piece.num_rows
        if not pieces:
            return None, offset
        return pa.concat_tables(pieces, promote_options="default"), offset + taken
