"""collect: results stream back to the client that submitted the job, through the JobManager.

Each bundle a sink subtask receives goes to the JobManager as a CollectResult (Arrow IPC); the client
reads them by offset from ``GET /jobs/<id>/results``.
"""
from __future__ import annotations

from runtime.connectors.base import SinkWriter, sink
from runtime.jobmanager.collect import table_to_b64
from runtime.messages import CollectResult


def collect_params() -> dict:
    return {"connector": "collect"}


@sink("collect")
class CollectWriter(SinkWriter):
    async def write(self, table) -> None:
        if table.num_rows == 0:
            return
        self.ctx.send(CollectResult(self.ctx.job_id, self.ctx.attempt_id, self.ctx.operator_id,
                                    self.ctx.subtask_index, table_to_b64(table), table.num_rows))
