"""collect: results stream back to the client that submitted the job, through the JobManager.

Without checkpointing every bundle goes to the JobManager as a CollectResult (Arrow IPC) at once.
With checkpointing the sink stages rows between barriers, keeps the staged rows in the checkpoint,
and sends them tagged with the checkpoint id only when that checkpoint completes. The JobManager
keeps one delivery per (sink subtask, checkpoint id), so a restored sink may re-send what its
checkpoint staged and the client still sees every row exactly once. A new job started from another
job's savepoint or checkpoint does not re-send that job's staged rows: they belong to the old job's
results, which its stop-with-savepoint delivered when the savepoint completed.
"""
from __future__ import annotations

import pyarrow as pa

from runtime.connectors.base import Connector, SinkWriter
from runtime.arrow_ipc import table_to_b64
from runtime.messages import CollectResult


def collect_params() -> dict:
    return {"connector": "collect"}


def _concat(tables: list[pa.Table]) -> pa.Table | None:
    tables = [t for t in tables if t.num_rows]
    return pa.concat_tables(tables, promote_options="default") if tables else None


class CollectWriter(SinkWriter):
    def __init__(self, ctx):
        super().__init__(ctx)
        self.current: list[pa.Table] = []
        self.staged: dict[int, pa.Table | None] = {}  # checkpoint id -> rows before its barrier

    async def write(self, table) -> None:
        if not self.ctx.checkpointing:
            self._send(table, None)
        else:
            self.current.append(table)

    def prepare_commit(self, checkpoint_id: int):
        self.staged[checkpoint_id] = _concat(self.current)
        self.current = []
        pending = [(cid, t) for cid, t in sorted(self.staged.items()) if t is not None]
        if not pending:
            return {"staged": [], "job": str(self.ctx.job_id)}, None
        table = pa.concat_tables([t.append_column("__checkpoint", pa.array([cid] * t.num_rows, pa.int64()))
                                  for cid, t in pending], promote_options="default")
        return {"staged": [cid for cid, _ in pending], "job": str(self.ctx.job_id)}, table

    def commit(self, checkpoint_id: int) -> None:
        for cid in sorted(c for c in self.staged if c <= checkpoint_id):
            table = self.staged.pop(cid)
            if table is not None:
                self._send(table, cid)

    def restore(self, states, checkpoint_id) -> None:
        """Re-send what the restored checkpoint staged; the JobManager drops what it already has."""
        for old_subtask, meta, table in states:
            if table is None or meta.get("job", str(self.ctx.job_id)) != str(self.ctx.job_id):
                continue
            for cid in meta.get("staged", []):
                rows = table.filter(pa.compute.equal(table.column("__checkpoint"), cid)).drop_columns(["__checkpoint"])
                self._send(rows, cid, old_subtask)

    async def close(self) -> None:
        """End of input: everything still staged goes out now."""
        self.commit(2**62)
        rest = _concat(self.current)
        self.current = []
        if rest is not None:
            self._send(rest, None)

    def _send(self, table: pa.Table, checkpoint_id: int | None, subtask: int | None = None) -> None:
        if table.num_rows == 0:
            return
        self.ctx.send(CollectResult(self.ctx.job_id, self.ctx.attempt_id, self.ctx.operator_id,
                                    self.ctx.subtask_index if subtask is None else subtask,
                                    table_to_b64(table), table.num_rows, checkpoint_id))


CONNECTOR = Connector("collect", writer=CollectWriter)
