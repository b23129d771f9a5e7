"""Checkpoints, savepoints and recovery on real processes: kill -9, rescaling, S3, failing checkpoints."""
from __future__ import annotations

import collections
import json
import os
import random
import subprocess
import sys
import time

import cloudpickle
import pytest

from runtime.api import KeyedProcessFunction, ValueStateDescriptor
from runtime.examples import clicks
from tests.helpers.ha import registered_taskmanagers
from tests.helpers.pacing import Pace
from tests.helpers.s3 import s3_server
from tests.helpers.spark_reference import assert_clicks_exact, clicks_expected, clicks_rows
from tests.helpers.clusters import (FAST_FAILURE_CONFIG, busy_taskmanager, busy_taskmanagers, job_state,
                                   started_cluster, wait_for_checkpoint_after_restart, wait_until)

cloudpickle.register_pickle_by_value(sys.modules[__name__])  # TaskManagers cannot import this test module


def completed(cluster, job_id) -> int:
    return cluster.client.get(f"/jobs/{job_id}/checkpoints")["counts"]["completed"]


def wait_for_new_checkpoint(cluster, job_id, timeout=300):
    """Wait for the job to run and complete a checkpoint after now: progress between faults."""
    before = completed(cluster, job_id)
    wait_until(lambda: job_state(cluster.client, job_id) in ("RUNNING", "FINISHED") and
               (completed(cluster, job_id) > before or job_state(cluster.client, job_id) == "FINISHED"),
               timeout, "a new completed checkpoint")


@pytest.fixture(scope="module")
def kills_shared(tmp_path_factory):
    with started_cluster(tmp_path_factory.mktemp("kills"), taskmanagers=2, slots=2,
                         config={**FAST_FAILURE_CONFIG, "restart-strategy.fixed-delay.delay": "200 ms"}) as cluster:
        yield cluster


@pytest.fixture
def kill_cluster(kills_shared):
    """One 2 x 2 cluster for the module's kill tests that need no other configuration (a cluster start and its
    first Spark JVMs less per test): each test starts with two live TaskManagers registered, whatever the test
    before it killed, and its jobs, checkpoints and restarts are its own."""
    missing = 2 - sum(tm.alive() for tm in kills_shared.taskmanagers)
    for _ in range(missing):
        kills_shared.add_taskmanager(wait=False)
    wait_until(lambda: registered_taskmanagers(kills_shared) == 2, 120, "two live TaskManagers registered")
    return kills_shared


def files_under(path) -> list[str]:
    return [os.path.join(d, f) for d, _, fs in os.walk(path) for f in fs]


def fail_once_when(trigger: str):
    """A map function that raises once, when the test creates ``trigger`` (an injected task exception)."""
    def fn(frame):
        if os.path.exists(trigger):
            os.remove(trigger)
            raise RuntimeError("injected task failure")
        return frame
    return fn


@pytest.mark.serial  # ten failovers, timed by their input's pace: alone, and not a load on other tests
@pytest.mark.timeout(1500)
def test_ten_kills_and_a_task_exception_leave_the_committed_output_exact(fresh_cluster, spark, tmp_path):
    # A kill cycle reads input only from its restart to its first checkpoint and the random wait after it
    # (2-3 s, about 5,000 rows at the pace), the start up to the first kill up to 40,000: the paced input
    # outlasts eleven cycles with room, and the rest is read at full speed once the kills are done.
    rows, rate = 120_000, 1_000  # rows per second of each of the two source subtasks while paced
    # Two TaskManagers to spare: a restart mostly takes a free slot of a warm JVM instead of waiting for the
    # replacement's. Parallelism 2 on one-slot TaskManagers: every kill hits a TaskManager that runs the job,
    # and the exchange crosses processes.
    cluster = fresh_cluster(taskmanagers=4, slots=1, **{"restart-strategy.fixed-delay.delay": "200 ms"})
    trigger = str(tmp_path / "fail-now")
    out = tmp_path / "out"
    env = cluster.environment()
    env.set_parallelism(2)
    env.enable_checkpointing("1 s")
    pace = Pace(tmp_path / "pace", rate)
    clicks.counts(clicks.source(env, rows).map(fail_once_when(trigger), schema=clicks.SCHEMA)
                  .map(pace, schema=clicks.SCHEMA)).write_parquet(str(out))
    job = env.execute_async("clicks under fire")
    rng = random.Random(42)
    kills = 0
    while kills < 10 and job_state(cluster.client, job.job_id) != "FINISHED":
        # each fault after the previous failover has run and checkpointed, so none is folded into another
        wait_for_checkpoint_after_restart(cluster.client, job.job_id, restarts=kills + (kills >= 5))
        if job_state(cluster.client, job.job_id) == "FINISHED":
            break
        time.sleep(rng.uniform(0, 1.0))  # a random moment within the checkpoint cycle
        cluster.kill_taskmanager(rng.choice(busy_taskmanagers(cluster.client, job.job_id)))
        cluster.add_taskmanager(wait=False)
        kills += 1
        if kills == 5:
            wait_for_checkpoint_after_restart(cluster.client, job.job_id, restarts=kills)
            open(trigger, "w").close()
    assert kills == 10, f"the job finished after only {kills} kills; give it more input"
    pace.lift()
    assert job.wait(900) == "FINISHED"
    details = job.details()
    assert details["restarts"] >= 11
    root_causes = " ".join(e["stacktrace"] for e in job.exceptions()["exceptionHistory"]["entries"])
    assert "injected task failure" in root_causes and "lost" in root_causes

    got = spark.read.parquet(str(out)).toArrow()
    assert_clicks_exact(spark, got, rows)
    assert not files_under(out / ".staging"), "no staged files left"
    job_dir = os.path.join(cluster.working_dir, "checkpoints", job.job_id)
    checkpoints = lambda: [d for d in os.listdir(job_dir) if d.startswith("chk-")] if os.path.isdir(job_dir) else []  # noqa: E731
    wait_until(lambda: len(checkpoints()) <= 1, 30, "only the retained checkpoint left")


def test_per_key_sequence_numbers_rise_by_one_across_kills(kill_cluster, tmp_path):
    rows, keys = 160_000, 50  # 40 s of paced input: two kills, each after a restart and a checkpoint, under load
    cluster = kill_cluster
    env = cluster.environment()
    env.set_parallelism(2)
    env.enable_checkpointing("1 s")
    pace = Pace(tmp_path / "pace", 2_000)
    (env.datagen("seq BIGINT", number_of_rows=rows, fields={"seq": {"kind": "sequence"}})
        .map(pace, schema="seq BIGINT").with_columns(key=f"seq % {keys}", n=f"seq DIV {keys}")
        .key_by("key").filter("n >= 0").collect().set_parallelism(1))
    job = env.execute_async("sequences")
    for _ in range(2):
        wait_for_new_checkpoint(cluster, job.job_id)
        cluster.kill_taskmanager(busy_taskmanager(cluster.client, job.job_id))
        cluster.add_taskmanager(wait=False)
    pace.lift()
    got = job.results(timeout=600)
    per_key = collections.defaultdict(list)
    for r in got.to_pylist():
        per_key[r["key"]].append(r["n"])
    assert len(per_key) == keys
    for key, ns in per_key.items():
        ns.sort()
        assert ns == list(range(len(ns))), f"key {key}: gaps or duplicates"
    assert got.num_rows == rows
    assert job.details()["restarts"] >= 2


def windows_fired(job) -> int:
    """Rows out of the job's last task (the window and its sink), staged or not."""
    return sum((s.get("metrics") or {}).get("records_out", 0) for s in job.details()["vertices"][-1]["subtasks"])


def _stop(cluster, job_id, target) -> str:
    request = cluster.client.post(f"/jobs/{job_id}/stop", {"targetDirectory": str(target)})["request-id"]
    status = wait_until(lambda: (s := cluster.client.get(f"/jobs/{job_id}/savepoints/{request}"))["status"]["id"]
                        == "COMPLETED" and s, 120, "savepoint")
    assert "location" in status["operation"], status
    wait_until(lambda: job_state(cluster.client, job_id) == "FINISHED", 60, "job stopped")
    return status["operation"]["location"]


def test_stop_with_savepoint_and_resume_at_other_parallelisms_gives_the_uninterrupted_answer(cluster, spark, tmp_path):
    rows = 240_000
    pieces = []
    savepoint = None
    for parallelism, stop in ((2, True), (3, True), (1, False)):
        env = cluster.environment()
        env.set_parallelism(parallelism)
        # The collect sink stages what fires until a checkpoint: with none but the savepoint, every window of
        # the stopped run reaches the client through the savepoint, and none may come again from the next run.
        env.enable_checkpointing("1 h")
        if savepoint:
            env.from_savepoint(savepoint)
        # A 10 s window every 20,000 rows. At most 4,000 rows/s while a stop is to come: 60 s of input, so that
        # every source subtask still runs when it comes (a savepoint needs all tasks RUNNING); the last run
        # reads the rest quickly (the pace decides no event time: event_rate does).
        clicks.build(env, rows, rows_per_second=4_000 if stop else 40_000, event_rate=2_000.0)
        job = env.execute_async(f"clicks p{parallelism}")
        if stop:
            wait_until(lambda job=job: windows_fired(job) > 0, 180, "some windows fired")
            savepoint = _stop(cluster, job.job_id, tmp_path / "savepoints")
            assert cluster.client.get(f"/jobs/{job.job_id}/checkpoints")["latest"]["savepoint"]["is_savepoint"]
        pieces.append(job.results(timeout=300))
    got = [row for piece in pieces for row in clicks_rows(piece)]
    assert sorted(got) == clicks_rows(clicks_expected(spark, rows, event_rate=2_000.0))
    assert all(p.num_rows for p in pieces[:2]), "each run produced some of the windows"


def test_restore_from_an_unknown_savepoint_is_refused(cluster, tmp_path):
    env = cluster.environment()
    env.from_savepoint(str(tmp_path / "nothing-here"))
    clicks.build(env, 100)
    from runtime.client import ClusterError
    with pytest.raises(ClusterError, match="cannot restore from"):
        env.execute_async("no savepoint")


@pytest.fixture
def s3_emulator(monkeypatch):
    with s3_server(monkeypatch) as client:
        yield client


def test_checkpoints_in_s3_restore_after_a_kill(fresh_cluster, spark, s3_emulator, tmp_path):
    # Restores from file:// checkpoints are the ten-kill and sequence-number tests' daily bread.
    directory = "s3://checkpoints/flinkbench"
    rows = 200_000  # 40 s of paced input: the kill comes well before its end
    cluster = fresh_cluster(taskmanagers=2, slots=2, **{"state.checkpoints.dir": directory,
                                                       "restart-strategy.fixed-delay.delay": "200 ms"})
    env = cluster.environment()
    env.set_parallelism(2)
    env.enable_checkpointing("1 s")
    pace = Pace(tmp_path / "pace", 2_500)
    clicks.counts(clicks.source(env, rows).map(pace, schema=clicks.SCHEMA)).collect()
    job = env.execute_async("clicks on s3")
    wait_for_new_checkpoint(cluster, job.job_id)
    wait_for_new_checkpoint(cluster, job.job_id)
    assert job_state(cluster.client, job.job_id) == "RUNNING", "the job finished before the kill; give it more input"
    cluster.kill_taskmanager(busy_taskmanager(cluster.client, job.job_id))  # the first ready TaskManager may hold every slot
    cluster.add_taskmanager(wait=False)
    pace.lift()
    assert_clicks_exact(spark, job.results(timeout=600), rows)
    stats = cluster.client.get(f"/jobs/{job.job_id}/checkpoints")
    assert stats["latest"]["restored"] is not None and stats["latest"]["restored"]["external_path"].startswith("s3://")
    keys = [o["Key"] for o in s3_emulator.list_objects_v2(Bucket="checkpoints").get("Contents", [])]
    assert any(k.endswith("_metadata") for k in keys), keys


class RunningCount(KeyedProcessFunction):
    """Each row's position among its key's rows, from a count in keyed state: state restored wrongly shows
    as a gap or a repeat."""

    def open(self, ctx):
        self.count = ctx.get_state(ValueStateDescriptor("count", 0))

    def process_element(self, row, ctx, out):
        self.count.update(self.count.value() + 1)
        out.collect((row["key"], self.count.value()))


def test_incremental_checkpoints_upload_what_changed_and_restore_exactly_after_a_kill(kill_cluster):
    keys, hot, rows = 20_000, 4, 80_000  # every key once (large state), then only 4 keys (a few key groups) change
    cluster = kill_cluster
    env = cluster.environment()
    env.set_parallelism(2)
    env.enable_checkpointing("500 ms")
    env.set("execution.checkpointing.incremental", "true")
    (env.datagen("seq BIGINT", number_of_rows=rows, rows_per_second=4_000, fields={"seq": {"kind": "sequence"}})
        .with_columns(key=f"IF(seq < {keys}, seq, seq % {hot})")
        .key_by("key").process(RunningCount(), schema="key BIGINT, n BIGINT").collect())
    job = env.execute_async("running counts, incremental checkpoints")

    def small(h):
        return h["status"] == "COMPLETED" and h["checkpointed_size"] * 4 < h["state_size"]

    def history():
        return cluster.client.get(f"/jobs/{job.job_id}/checkpoints")["history"]
    wait_until(lambda: sum(map(small, history())) >= 2, 120, "two incremental checkpoints uploading a fraction")
    request = cluster.client.post(f"/jobs/{job.job_id}/checkpoints", {"checkpointType": "FULL"})["request-id"]
    status = wait_until(lambda: (s := cluster.client.get(f"/jobs/{job.job_id}/checkpoints/{request}"))["status"]["id"]
                        == "COMPLETED" and s, 60, "a full checkpoint")
    assert status["operation"].get("checkpointId"), status
    full = next(h for h in history() if h["id"] == status["operation"]["checkpointId"])
    assert full["checkpointed_size"] > full["state_size"] / 2, "a full checkpoint uploads every key group"
    wait_until(lambda: any(small(h) and h["id"] > full["id"] for h in history()), 60,
               "an incremental checkpoint referring to the full one's files")
    assert job_state(cluster.client, job.job_id) == "RUNNING", "the job finished before the kill; give it more input"
    cluster.kill_taskmanager(busy_taskmanager(cluster.client, job.job_id))  # the other has slots for the job
    restored = wait_until(lambda: cluster.client.get(f"/jobs/{job.job_id}/checkpoints")["latest"]["restored"], 120,
                          "the job restored from a checkpoint")
    assert small(next(h for h in history() if h["id"] == restored["id"])), \
        "restored from an incremental checkpoint that referred to earlier ones' files"

    got = job.results(timeout=300).to_pylist()
    per_key = collections.defaultdict(list)
    for r in got:
        per_key[r["key"]].append(r["n"])
    expected = collections.Counter(seq if seq < keys else seq % hot for seq in range(rows))
    assert {k: sorted(ns) for k, ns in per_key.items()} == {k: list(range(1, c + 1)) for k, c in expected.items()}

    job_dir = os.path.join(cluster.working_dir, "checkpoints", job.job_id)

    def shared_files_match_the_retained_checkpoint():
        retained = [d for d in os.listdir(job_dir) if d.startswith("chk-")]
        if len(retained) != 1:
            return False
        with open(os.path.join(job_dir, retained[0], "_metadata")) as fh:
            referenced = {url for s in json.load(fh)["subtasks"] for url in s["shared"]}
        present = {f"file://{path}" for path in files_under(os.path.join(job_dir, "shared"))}
        return referenced and present == referenced
    wait_until(shared_files_match_the_retained_checkpoint, 30, "only the retained checkpoint's shared files left")


def test_a_checkpoint_that_times_out_fails_alone(cluster):
    env = cluster.environment(**{"execution.checkpointing.timeout": "1 ms"})  # the job's own: the shared cluster
    env.enable_checkpointing("500 ms")
    env.datagen("seq BIGINT", number_of_rows=20_000, rows_per_second=4_000,
                fields={"seq": {"kind": "sequence"}}).collect()
    job = env.execute_async("impatient checkpoints")
    stats = wait_until(lambda: (s := cluster.client.get(f"/jobs/{job.job_id}/checkpoints"))["counts"]["failed"] >= 2
                       and s, 120, "failed checkpoints")
    assert "expired" in stats["latest"]["failed"]["failure_message"]
    assert job_state(cluster.client, job.job_id) in ("RUNNING", "FINISHED")
    assert sorted(job.results(timeout=300).column("seq").to_pylist()) == list(range(20_000))


def test_unwritable_storage_fails_checkpoints_and_only_beyond_tolerance_the_job(cluster, tmp_path):
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("a file where the checkpoint directory should go")
    unwritable = {"state.checkpoints.dir": str(blocker / "chk")}  # each job's own: the shared cluster's stays good
    env = cluster.environment(**unwritable)
    env.enable_checkpointing("500 ms")
    env.datagen("seq BIGINT", number_of_rows=10_000, rows_per_second=4_000,
                fields={"seq": {"kind": "sequence"}}).collect()
    job = env.execute_async("tolerant")
    stats = wait_until(lambda: (s := cluster.client.get(f"/jobs/{job.job_id}/checkpoints"))["counts"]["failed"] >= 2
                       and s, 120, "failed checkpoints")
    assert "cannot write" in stats["latest"]["failed"]["failure_message"]
    assert sorted(job.results(timeout=300).column("seq").to_pylist()) == list(range(10_000))

    env = cluster.environment(**unwritable)
    env.enable_checkpointing("500 ms")
    env.set("execution.checkpointing.tolerable-failed-checkpoints", 0)
    env.set("restart-strategy.type", "none")
    env.datagen("seq BIGINT", rows_per_second=1_000, fields={"seq": {"kind": "sequence"}}).blackhole()
    from runtime.client import JobFailed
    with pytest.raises(JobFailed, match="tolerable failure threshold"):
        env.execute_async("intolerant").wait(120)


def test_cli_takes_a_savepoint_and_stops_a_job(cluster, tmp_path):
    env = cluster.environment()
    env.datagen("seq BIGINT", rows_per_second=2_000, fields={"seq": {"kind": "sequence"}}).blackhole()
    job = env.execute_async("cli target")
    wait_until(lambda: all(s["status"] == "RUNNING" for v in job.details()["vertices"] for s in v["subtasks"]),
               180, "every task running (savepoints need them all)")
    target = ["--jobmanager", cluster.url, "--token-file", cluster.token_file]

    def cli(*args):
        return subprocess.run([sys.executable, "-m", "runtime.cli", *args], capture_output=True, text=True, timeout=300)
    taken = cli("savepoint", *target, job.job_id, str(tmp_path / "sp"))
    assert taken.returncode == 0 and "completed: file://" in taken.stdout, taken.stderr
    assert os.path.exists(taken.stdout.split("completed: file://")[1].strip() + "/_metadata")
    stopped = cli("stop", *target, job.job_id, "-p", str(tmp_path / "sp"))
    assert stopped.returncode == 0, stopped.stderr
    assert job.wait(60) == "FINISHED"
    refused = cli("stop", *target, job.job_id)
    assert refused.returncode == 2 and "FINISHED" in refused.stderr
