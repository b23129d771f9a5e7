"""The event stream tells one job's life in order, as the live views read it."""
from __future__ import annotations

from tests.helpers.clusters import wait_until
from tests.helpers.events import EventRecorder
from tests.integration.test_cluster_core import seq_source


def test_one_jobs_life_on_the_event_stream(cluster):
    events = EventRecorder(cluster)
    env = cluster.environment()
    env.set_parallelism(2)
    seq_source(env, rows=2000).collect().set_parallelism(1)
    job = env.execute_async("life")
    job.results(timeout=240)
    wait_until(lambda: len([e for e in events.of_type("SlotFreed") if e.get("job_id") == job.job_id]) == 2,
               30, "both slots freed")
    mine = [e for e in events.events if e.get("job_id") == job.job_id]
    seqs = [e["seq"] for e in events.events]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs), "seq rises by event"
    assert events.snapshot["seq"] < seqs[0]

    kinds = [e["type"] for e in mine]
    assert kinds[0] == "JobSubmitted"
    job_states = [e["status"] for e in mine if e["type"] == "JobStatusChanged"]
    assert job_states == ["CREATED", "RUNNING", "FINISHED"], job_states
    first_alloc = kinds.index("SlotAllocated")
    first_running = next(i for i, e in enumerate(mine) if e["type"] == "JobStatusChanged" and e["status"] == "RUNNING")
    assert first_alloc < first_running, "slots come before the job runs"
    assert kinds.count("SlotAllocated") == 2 and kinds.count("SlotFreed") == 2

    per_subtask: dict[tuple, list[str]] = {}
    for e in mine:
        if e["type"] == "TaskStatusChanged":
            per_subtask.setdefault((e["vertex_id"], e["subtask_index"]), []).append(e["state"])
    assert len(per_subtask) == 3, "two source subtasks, one collect subtask"
    for states in per_subtask.values():
        assert states == ["SCHEDULED", "DEPLOYING", "INITIALIZING", "RUNNING", "FINISHED"], states
    finished_at = kinds.index("JobStatusChanged", max(i for i, e in enumerate(mine) if e["type"] == "TaskStatusChanged"))
    assert mine[finished_at]["status"] == "FINISHED"
    assert any(e["type"] == "TaskMetricsReported" for e in mine)
    events.close()
