"""``make demo``: what Flinkbench is, in under a minute.

The "clicks" pipeline (runtime/examples/clicks.py: generated click events -> filter -> key by user ->
10 s event-time tumbling windows counting clicks and summing amounts, checkpointed every second,
exactly-once collect sink) runs on an embedded cluster of real processes: one JobManager and two
TaskManagers, each with its own Spark session. Halfway through the input one TaskManager is killed
with SIGKILL; the JobManager notices, restarts the job and restores every task from the latest
checkpoint. The output is then checked, row for row, against the same query run as a plain Spark
batch job. Each step is one line, told from the JobManager's event stream as it happens.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

import pyarrow as pa
import pyarrow.ipc as ipc
import websocket

from runtime.cluster import LocalCluster
from runtime.errors import FlinkbenchError, last_line
from runtime.examples import clicks
from runtime.examples.clicks_reference import comparable, expected
from runtime.java import check_java

ROWS = 60_000
RATE = 10_000  # rows per second: six seconds of input, so the kill comes about three seconds in
PARALLELISM = 2
CLUSTER_CONFIG = {"restart-strategy.fixed-delay.delay": "200 ms", "spark.driver.memory": "1g"}


class Narrator:
    """Prints one timed line per step, and kills a TaskManager once half the input has been read
    after a completed checkpoint. Fed the job's events, in order, on the main thread."""

    def __init__(self, cluster: LocalCluster, job_id: str, say: Callable[[str], None]):
        self.cluster, self.job_id, self.say = cluster, job_id, say
        self.read: dict[int, int] = {}  # source subtask -> rows read in the current attempt
        self.source_tm: str | None = None
        self.checkpoint: int | None = None
        self.killed = self.flowing = False
        self.state = "CREATED"

    def on(self, event: dict) -> None:
        if event.get("job_id") not in (None, self.job_id):
            return
        handler = getattr(self, f"_on_{event['type']}", None)
        if handler is not None:
            handler(event)

    def _on_JobStatusChanged(self, e: dict) -> None:  # noqa: N802 - named after the event
        self.state = e["status"]
        if e["status"] == "RUNNING" and e["attempt"] == 0:
            self.say(f"job {self.job_id[:8]} RUNNING on {PARALLELISM} slots; checkpoints every second")
        elif e["status"] == "RUNNING":
            self.say(f"job RUNNING again (attempt {e['attempt'] + 1}), reading on from the checkpoint's offsets")
        elif e["status"] in ("FAILED", "CANCELED"):
            self.say(f"job {e['status']}: {e.get('cause') or ''}".strip())

    def _on_TaskStatusChanged(self, e: dict) -> None:  # noqa: N802
        if e["state"] == "RUNNING" and e["task_name"].startswith("Source") and self.source_tm is None:
            self.source_tm = e["tm_id"]

    def _on_CheckpointCompleted(self, e: dict) -> None:  # noqa: N802
        if not self.killed and not e["is_savepoint"]:
            if self.checkpoint is None:
                self.say(f"checkpoint {e['checkpoint_id']} complete: window state of {e['state_size'] / 1024:.0f} KiB "
                         f"in {e['duration_s'] * 1000:.0f} ms (the job can now recover from it)")
            self.checkpoint = e["checkpoint_id"]

    def _on_TaskMetricsReported(self, e: dict) -> None:  # noqa: N802
        if e["task_name"].startswith("Source"):
            if not self.flowing and e["metrics"]["records_in"]:
                self.flowing = True
                self.say("clicks flowing: the TaskManagers' Spark sessions are up and the first bundles ran")
            self.read[e["subtask_index"]] = e["metrics"]["records_in"]
        if not self.killed and self.checkpoint is not None and sum(self.read.values()) >= ROWS // 2:
            self.kill()

    def kill(self) -> None:
        self.killed = True
        victim = self.cluster.taskmanager_by_id(self.source_tm) if self.source_tm else self.cluster.taskmanagers[0]
        self.say(f"killing TaskManager {self.source_tm} (pid {victim.pid}, with its Spark JVM) with SIGKILL after "
                 f"{sum(self.read.values()):,} of {ROWS:,} clicks; latest checkpoint: {self.checkpoint}")
        victim.kill()

    def _on_TaskManagerLost(self, e: dict) -> None:  # noqa: N802
        self.say(f"the JobManager declares TaskManager {e['tm_id']} lost: {e['reason']}")

    def _on_JobRestarting(self, e: dict) -> None:  # noqa: N802
        cause = last_line(e["cause"])
        self.say(f"restarting the job in {e['delay_s'] * 1000:.0f} ms on the slots left (cause: "
                 f"{cause[:90] + '...' if len(cause) > 90 else cause})")

    def _on_CheckpointRestored(self, e: dict) -> None:  # noqa: N802
        self.say(f"every task restores its state from checkpoint {e['checkpoint_id']}")
        self.read.clear()


def teller(started: float) -> Callable[[str], None]:
    """Print a line stamped with the seconds since ``started``."""
    def say(line: str) -> None:
        print(f"[{time.monotonic() - started:5.1f} s] {line}", flush=True)
    return say


def events(cluster: LocalCluster, timeout: float = 300.0) -> websocket.WebSocket:
    """The JobManager's event stream, past its opening snapshot: every event from now on, in order."""
    url = cluster.url.replace("http://", "ws://") + "/events"
    ws = websocket.create_connection(url, header=[f"Authorization: Bearer {cluster.token}"], timeout=timeout)
    ws.recv()  # the ClusterSnapshot
    return ws


def follow(ws: websocket.WebSocket, narrator: Narrator) -> None:
    """Feed the narrator the events until the job ends."""
    try:
        while narrator.state not in ("FINISHED", "FAILED", "CANCELED"):
            narrator.on(json.loads(ws.recv()))
    finally:
        ws.close()


class Reference:
    """The same query as a plain Spark batch job, in a quiet low-priority process of its own (its JVM's
    start-up would otherwise compete with the cluster's), written to ``folder``/reference.arrow. Its
    stderr goes to a file beside it, so a reference that fails can say why instead of going silent."""

    def __init__(self, folder: str):
        self.path = os.path.join(folder, "reference.arrow")
        self.log_path = os.path.join(folder, "reference.log")
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen([sys.executable, "-m", "runtime.demo", "--reference", self.path],
                                            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                            preexec_fn=lambda: os.nice(19))

    def rows(self) -> list[tuple]:
        """The reference's rows once its process ends; FlinkbenchError with the process's last lines if it
        failed."""
        if self.process.wait() != 0:
            with open(self.log_path, errors="replace") as log:
                tail = [line.rstrip() for line in log.readlines() if line.strip()][-6:]
            raise FlinkbenchError("the reference answer (a plain Spark batch query) failed with exit code "
                                  f"{self.process.returncode}:\n  " + "\n  ".join(tail or ["(no output)"]))
        with pa.memory_map(self.path) as source:
            return comparable(ipc.open_file(source).read_all())

    def stop(self) -> None:
        self.process.kill()
        self.process.wait()


def write_reference(path: str) -> None:
    from pyspark.sql import SparkSession

    spark = (SparkSession.builder.master("local[1]").appName("clicks-reference")
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .config("spark.driver.memory", "512m").config("spark.sql.session.timeZone", "UTC").getOrCreate())
    try:
        table = expected(spark, ROWS)
    finally:
        spark.stop()
    with pa.OSFile(path, "wb") as sink, ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)


def run_clicks(cluster: LocalCluster, say: Callable[[str], None]) -> tuple[list[tuple], int]:
    """Submit the clicks job, narrate it (killing a TaskManager halfway) and return its rows and restarts."""
    env = cluster.environment()
    env.set_parallelism(PARALLELISM)
    env.enable_checkpointing("1 s")
    clicks.build(env, ROWS, rows_per_second=RATE)
    stream = events(cluster)  # before submitting: no event of the job is missed
    job = env.execute_async("clicks")
    say(f"submitted 'clicks': {ROWS:,} generated clicks at {RATE:,}/s -> filter amount > 0.1 -> key by user -> "
        f"{clicks.WINDOW} event-time windows (count, sum) -> exactly-once collect")
    follow(stream, Narrator(cluster, job.job_id, say))
    return comparable(job.results(timeout=120)), job.details().get("restarts", 0)


def main() -> int:
    check_java()
    say = teller(time.monotonic())
    say("starting an embedded cluster: 1 JobManager, 2 TaskManagers x 2 slots, each TaskManager a process "
        "with its own Spark session")
    with tempfile.TemporaryDirectory(prefix="flinkbench-demo-") as scratch:
        reference = Reference(scratch)
        try:
            with LocalCluster(taskmanagers=2, slots=2, config=CLUSTER_CONFIG) as cluster:
                say(f"cluster up; watch it live: {cluster.url}/dashboard?token={cluster.token}")
                got, restarts = run_clicks(cluster, say)
            say(f"job FINISHED after {restarts} restart(s): {len(got):,} (user, window) rows; all processes stopped")
            want = reference.rows()
        finally:
            reference.stop()
    if want == got:
        say("exact: every per-user, per-window count and sum equals a plain Spark batch query over the same "
            "clicks; nothing lost, nothing counted twice")
        return 0
    missing, extra = len(set(want) - set(got)), len(set(got) - set(want))
    say(f"MISMATCH: {len(got):,} rows from the job, {len(want):,} expected ({missing:,} missing, {extra:,} not expected)")
    return 1


if __name__ == "__main__":
    try:
        if sys.argv[1:2] == ["--reference"]:
            write_reference(sys.argv[2])
            sys.exit(0)
        sys.exit(main())
    except FlinkbenchError as err:
        print(f"flinkbench: {err}", file=sys.stderr)
        sys.exit(2)
