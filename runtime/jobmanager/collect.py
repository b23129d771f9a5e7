"""The JobManager side of the collect sink: rows from sink subtasks, buffered for the client.

Clients read by offset (``GET /jobs/<id>/results?offset=N``), so several readers and reconnects
work. Memory is bounded: beyond ``max_rows`` the oldest rows are dropped and counted.
"""
from __future__ import annotations

import pyarrow as pa

from runtime.arrow_ipc import table_from_b64
from runtime.messages import CollectResult

DEFAULT_MAX_ROWS = 2_000_000


class CollectBuffer:
    def __init__(self, max_rows: int = DEFAULT_MAX_ROWS):
        self.max_rows = max_rows
        self._tables: list[tuple[int, pa.Table]] = []  # (offset of first row, rows)
        self.total_rows = 0
        self.dropped_rows = 0
        self.finished = False
        self.schema: pa.Schema | None = None
        self._delivered: set[tuple[str, int, int]] = set()  # (sink, subtask, checkpoint id)

    def add(self, msg: CollectResult) -> None:
        """Append a delivery; one committed by a checkpoint is taken once however often it is re-sent."""
        if msg.checkpoint_id is not None:
            key = (msg.sink_id, msg.subtask_index, msg.checkpoint_id)
            if key in self._delivered:
                return
            self._delivered.add(key)
        table = table_from_b64(msg.arrow_b64)
        if table.num_rows == 0:
            self.schema = self.schema or table.schema
            return
        self.schema = self.schema or table.schema
        self._tables.append((self.total_rows, table))
        self.total_rows += table.num_rows
        self._evict()

    def _evict(self) -> None:
        held = self.total_rows - self.dropped_rows
        while self._tables and held - self._tables[0][1].num_rows >= self.max_rows:
            _, table = self._tables.pop(0)
            self.dropped_rows += table.num_rows
            held -= table.num_rows

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
