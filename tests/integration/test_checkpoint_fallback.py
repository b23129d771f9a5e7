"""A restore point whose files are damaged or missing: with two retained checkpoints the job falls back to
the older one and finishes with no row lost; with one it fails within two restore attempts, naming the
checkpoint, instead of restarting for ever. Checkpoints are triggered by hand (the periodic interval is an
hour), so the test knows which is which; a task exception makes the job restore."""
from __future__ import annotations

import os
import pathlib

import pytest

from runtime.errors import JobFailed
from tests.chaos.checker import check
from tests.chaos.job import SCHEMA, RunningCount, committed_columns
from tests.helpers.clusters import wait_until
from tests.helpers.pacing import Pace
from tests.integration.test_checkpoints import fail_once_when

ROWS, KEYS = 100_000, 10  # 50 s of input at the pace, read at full speed once the test lifts it


def start(cluster, tmp_path, retained: int):
    env = cluster.environment(**{"state.checkpoints.num-retained": str(retained),
                                 "restart-strategy.type": "fixed-delay", "restart-strategy.fixed-delay.delay": "200 ms"})
    env.set_parallelism(2)
    env.enable_checkpointing("1 h")  # only the checkpoints the test triggers
    pace, trigger, out = Pace(tmp_path / "pace", 1_000.0), str(tmp_path / "fail-now"), str(tmp_path / "out")
    (env.datagen("i BIGINT", number_of_rows=ROWS, fields={"i": {"kind": "sequence"}})
        .map(pace, schema="i BIGINT")
        .map(fail_once_when(trigger), schema="i BIGINT")
        .with_columns(key=f"i % {KEYS}", seq=f"i DIV {KEYS}")
        .key_by("key")
        .process(RunningCount(), schema=SCHEMA)
        .write_parquet(out))
    job = env.execute_async(f"restore fallback, {retained} retained")
    wait_until(lambda: job.status() == "RUNNING" and all(
        s["status"] == "RUNNING" for v in job.details()["vertices"] for s in v["subtasks"]), 180, "the job running")
    return job, pace, trigger, out


def directory_of(job, checkpoint_id: int) -> pathlib.Path:
    stats = job.rest.get(f"/jobs/{job.job_id}/checkpoints")
    path = next(h["external_path"] for h in stats["history"] if h["id"] == checkpoint_id)
    return pathlib.Path(path.removeprefix("file://"))


def snapshot_files(directory: pathlib.Path) -> list[pathlib.Path]:
    return [p for p in directory.rglob("state.json")]


@pytest.mark.timeout(600)
def test_a_damaged_latest_checkpoint_gives_way_to_the_older_retained_one(cluster, tmp_path):
    job, pace, trigger, out = start(cluster, tmp_path, retained=2)
    older = job.checkpoint()
    newer = job.checkpoint()
    damaged = directory_of(job, newer)
    for state in snapshot_files(damaged):
        state.write_bytes(b"\x00 damaged on disk")
    pathlib.Path(trigger).touch()
    wait_until(lambda: (job.rest.get(f"/jobs/{job.job_id}/checkpoints")["latest"]["restored"] or {}).get("id") == older,
               300, f"the job restored from the older checkpoint {older}")
    pace.lift()
    assert job.wait(600) == "FINISHED"
    history = job.exceptions()["exceptionHistory"]["entries"]
    assert any("RestoreFailed" in e["exceptionName"] and str(damaged) in e["stacktrace"] for e in history), history
    v = check(*committed_columns(out), expected_rows=ROWS, num_keys=KEYS)
    # What the newer checkpoint had committed is produced again from the older one: nothing lost, nothing
    # foreign, every key's sequence whole; rows between the two checkpoints appear twice.
    assert (v.lost, v.unexpected, v.keys_with_gaps) == (0, 0, 0), v


@pytest.mark.timeout(600)
def test_a_missing_only_checkpoint_fails_the_job_naming_it_within_two_restore_attempts(cluster, tmp_path):
    job, pace, trigger, _ = start(cluster, tmp_path, retained=1)
    only = job.checkpoint()
    missing = directory_of(job, only)
    for state in snapshot_files(missing):
        os.remove(state)
    pathlib.Path(trigger).touch()
    try:
        with pytest.raises(JobFailed) as failed:
            job.wait(300)
    finally:
        pace.lift()
    assert f"cannot restore checkpoint {only} (file://{missing}) in 2 attempts" in str(failed.value), failed.value
    assert "no older retained checkpoint" in str(failed.value) and "state.json" in str(failed.value)
    assert job.details()["restarts"] <= 2, "never a restore loop"
