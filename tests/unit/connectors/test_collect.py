"""The collect sink's staging: rows reach the client once per job, across restores."""
import asyncio

import pyarrow as pa

from runtime.arrow_ipc import table_from_b64
from runtime.connectors.base import ConnectorContext
from runtime.connectors.collect import CollectWriter


def writer(job_id: str, sent: list) -> CollectWriter:
    ctx = ConnectorContext("sink", "Collect", 0, 1, {}, None, sent.append, job_id, "attempt", "streaming", None,
                           checkpointing=True)
    return CollectWriter(ctx)


def staged_state(job_id: str):
    w = writer(job_id, [])
    asyncio.run(w.write(pa.table({"n": [1, 2, 3]})))
    meta, table = w.prepare_commit(7)
    return [(0, meta, table)]


def test_a_restore_in_the_same_job_re_sends_what_its_checkpoint_staged():
    sent = []
    writer("job-a", sent).restore(staged_state("job-a"), 7)
    assert [(m.checkpoint_id, table_from_b64(m.arrow_b64).column("n").to_pylist()) for m in sent] == [(7, [1, 2, 3])]


def test_a_new_job_from_another_jobs_savepoint_does_not_re_send_that_jobs_rows():
    sent = []
    writer("job-b", sent).restore(staged_state("job-a"), 7)
    assert sent == []
