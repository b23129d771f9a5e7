"""Where the time goes between a job's submission and its first windows at the client: the timeline of one run
of the README's first job (clicks, parallelism 2, 1,000 rows/s of wall-clock event time, 50 users, 10 s windows,
checkpoints every 2 s, collected) and, with ``--sql``, the README's SQL window query beside it, on a cluster
started as ``%flink local --taskmanagers 2 --slots 2`` starts it.

    .venv/bin/python -m tests.benchmarks.first_windows [--when fresh|up|warm] [--sql [--sql-after S]] [--seconds 30]

``--when`` says when the job is submitted: ``fresh`` as soon as the cluster's start returns (its TaskManagers
registered, their Spark JVMs maybe still starting), ``up`` once both Spark sessions are up (the JobManager logs
each; what tests/ui/test_newcomer.py waits for), ``warm`` once both ran their warm-up query. The timeline is told
from the JobManager's event stream (task states, each subtask's first metrics with a bundle, its phases, the
first watermark and window output, checkpoints), the TaskManagers' logs, and the client's reads of the rows:
each window's end against the moment its rows reached the client. Timing figures: meaningless while other work
loads the machine (the load average is printed).
"""
from __future__ import annotations

import argparse
import datetime
import os
import re
import threading
import time

from runtime.cluster import LocalCluster
from runtime.examples import clicks
from runtime.table import StreamTableEnvironment
from tests.helpers.clusters import wait_until
from tests.helpers.events import EventRecorder

LOCAL = {"resourcemanager.provider": "local", "cluster.fault-injection.enabled": "true"}  # as %flink local
SQL = ["CREATE TABLE clicks (`user` BIGINT, url STRING, amount DOUBLE, ts TIMESTAMP(3), "
       "WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH ('connector' = 'datagen', 'rows-per-second' = '1000', "
       "'fields.user.min' = '0', 'fields.user.max' = '9')",
       "SELECT window_start, window_end, `user`, COUNT(*) AS clicks, SUM(amount) AS total "
       "FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY window_start, window_end, `user`"]
LOG_LINE = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) \w+ [\w.]+: (.*)$")
LOG_MARKS = ("Spark session up", "warmed up", "warm-up failed", "class archive")


class Timeline:
    """Moments (epoch seconds, what) gathered from every source, told in order relative to a start."""

    def __init__(self, start: float):
        self.start = start
        self.marks: list[tuple[float, str]] = []
        self._lock = threading.Lock()

    def add(self, when: float, what: str) -> None:
        with self._lock:
            self.marks.append((when, what))

    def show(self) -> None:
        for when, what in sorted(self.marks):
            print(f"  {when - self.start:7.2f} s  {what}", flush=True)


def log_marks(cluster: LocalCluster, timeline: Timeline) -> None:
    """The TaskManagers' and the JobManager's log lines about Spark sessions and warm-ups."""
    for child in [*cluster.jobmanager_processes, *cluster.taskmanagers]:
        path = os.path.join(cluster.working_dir, f"{child.name}.log")
        if not os.path.exists(path):
            continue
        with open(path, encoding="utf-8", errors="replace") as log:
            for line in log:
                match = LOG_LINE.match(line.rstrip())
                if match and any(mark in match.group(2) for mark in LOG_MARKS):
                    when = datetime.datetime.strptime(match.group(1), "%Y-%m-%d %H:%M:%S,%f").timestamp()
                    timeline.add(when, f"{child.name}: {match.group(2)[:110]}")


def event_marks(events: list[dict], timeline: Timeline, names: dict[str, str]) -> None:
    """Job and task states, each subtask's first metrics report with a bundle done (its phases then), the first
    watermark and output of each subtask, checkpoints."""
    seen: set[tuple] = set()
    for e in events:
        kind, ts, job = e["type"], e["ts"], names.get(e.get("job_id", ""), "")
        if kind == "JobStatusChanged":
            timeline.add(ts, f"{job}: job {e['status']}")
        elif kind == "TaskStatusChanged" and e["state"] in ("DEPLOYING", "INITIALIZING", "RUNNING"):
            timeline.add(ts, f"{job}: {short(e['task_name'])} #{e['subtask_index']} {e['state']}")
        elif kind == "TaskMetricsReported":
            metric_marks(e, job, timeline, seen)
        elif kind in ("CheckpointTriggered", "CheckpointCompleted", "CheckpointFailed"):
            timeline.add(ts, f"{job}: {kind} {e.get('checkpoint_id')} "
                             f"{'' if kind == 'CheckpointTriggered' else round(e.get('duration_s') or 0, 2)}")


def metric_marks(e: dict, job: str, timeline: Timeline, seen: set[tuple]) -> None:
    m, who = e["metrics"], f"{job}: {short(e['task_name'])} #{e['subtask_index']}"
    firsts = [("bundle", (m.get("bundles") or 0) > 0,
               lambda: f"first bundle(s) done: {m['bundles']}, phases {phases(m)}"),
              ("watermark", m.get("watermark") is not None, lambda: f"first watermark {stamp(m['watermark'])}"),
              ("output", (m.get("records_out") or 0) > 0, lambda: f"first output, {m['records_out']} rows"),
              ("idle", (m.get("busy_time_ms_per_s") or 0) < 500, lambda: "busy under 50 %")]
    for what, happened, text in firsts:
        if happened and (e["job_id"], e["task_name"], e["subtask_index"], what) not in seen:
            seen.add((e["job_id"], e["task_name"], e["subtask_index"], what))
            timeline.add(e["ts"], f"{who} {text()}")
    timeline.add(e["ts"], f"{who} busy {m.get('busy_time_ms_per_s', 0):.0f} idle {m.get('idle_time_ms_per_s', 0):.0f}"
                          f" bp {m.get('backpressured_time_ms_per_s', 0):.0f} ms/s, bundles {m.get('bundles')}, "
                          f"max phases {phases(m, 'phase_max_s')}")


def phases(m: dict, key: str = "phase_s") -> str:
    return ", ".join(f"{k} {v:.2f}" for k, v in sorted((m.get(key) or {}).items(), key=lambda kv: -kv[1]) if v >= 0.05)


def stamp(epoch: float) -> str:
    return datetime.datetime.fromtimestamp(epoch).strftime("%H:%M:%S.%f")[:-3]


def short(name: str) -> str:
    return name if len(name) <= 40 else name[:39] + "\u2026"


def read_windows(job, label: str, timeline: Timeline, stop: threading.Event, delays: list[float]) -> None:
    """The client's reads (as the notebook's view polls, every 0.3 s): each new window's end against the moment
    its first rows arrived."""
    offset, seen = 0, set()
    while not stop.is_set():
        table, offset, done, _ = job.fetch(offset)
        now = time.time()
        if table.num_rows:
            for end in sorted(set(table.column("window_end").to_pylist()) - seen):
                seen.add(end)
                epoch = end.replace(tzinfo=datetime.timezone.utc).timestamp() if end.tzinfo is None else end.timestamp()
                delays.append(now - epoch)
                timeline.add(now, f"{label}: rows of the window ending {stamp(epoch)} at the client, "
                                  f"{now - epoch:.2f} s after its end ({table.num_rows} rows read)")
        if done:
            return
        stop.wait(0.3)


def submit_clicks(cluster: LocalCluster):
    env = cluster.environment()
    env.set_parallelism(2)
    env.enable_checkpointing("2 s")  # as the README's cell
    clicks.build(env, rows=None, rows_per_second=1000, realtime=True, users=50)
    return env.execute_async("clicks")


def submit_sql(cluster: LocalCluster):
    t_env = StreamTableEnvironment.create(cluster.environment())
    t_env.get_config().set("pipeline.name", "tumble-sql")
    t_env.execute_sql(SQL[0])
    return t_env.execute_sql(SQL[1]).get_job_client()


def wait_for(cluster: LocalCluster, when: str) -> None:
    """Until the cluster is as ``when`` says (see the module's docstring)."""
    if when == "fresh":
        return
    mark, path = ("warmed up", "taskmanager-*.log") if when == "warm" else ("Spark session up", "jobmanager.log")

    def count() -> int:
        names = ["jobmanager.log"] if path == "jobmanager.log" else [f"{tm.name}.log" for tm in cluster.taskmanagers]
        total = 0
        for name in names:
            file = os.path.join(cluster.working_dir, name)
            if os.path.exists(file):
                with open(file, encoding="utf-8", errors="replace") as log:
                    total += log.read().count(mark)
        return total
    wait_until(lambda: count() >= 2, 300, f"both TaskManagers' '{mark}'")


def run(when: str, sql: bool, seconds: float, sql_after: float = 0.0) -> None:
    print(f"load average before: {os.getloadavg()}", flush=True)
    t0 = time.time()
    timeline = Timeline(t0)
    with LocalCluster(taskmanagers=2, slots=2, config=LOCAL) as cluster:
        recorder = EventRecorder(cluster)
        timeline.add(time.time(), "cluster started (TaskManagers registered)")
        wait_for(cluster, when)
        stop, readers, delays = threading.Event(), [], {}
        jobs = [("clicks", submit_clicks)] + ([("tumble-sql", submit_sql)] if sql else [])
        names = {}
        for label, submit in jobs:
            if label == "tumble-sql":
                time.sleep(sql_after)
            timeline.add(time.time(), f"{label}: submitting")
            job = submit(cluster)
            names[str(job.job_id)] = label
            timeline.add(time.time(), f"{label}: submitted")
            delays[label] = []
            reader = threading.Thread(target=read_windows, args=(job, label, timeline, stop, delays[label]))
            reader.start()
            readers.append((job, reader))
        time.sleep(seconds)
        stop.set()
        for job, reader in readers:
            reader.join()
            job.cancel()
        recorder.close()
        log_marks(cluster, timeline)
        event_marks(recorder.events, timeline, names)
    timeline.show()
    for label, values in delays.items():
        print(f"{label}: window end -> client: {', '.join(f'{d:.2f}' for d in values)} s", flush=True)
    print(f"load average after: {os.getloadavg()}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--when", choices=("fresh", "up", "warm"), default="fresh")
    parser.add_argument("--sql", action="store_true", help="the README's SQL window query beside the clicks job")
    parser.add_argument("--seconds", type=float, default=30.0, help="how long the jobs run")
    parser.add_argument("--sql-after", type=float, default=0.0, help="seconds between the two jobs' submissions")
    args = parser.parse_args()
    run(args.when, args.sql, args.seconds, args.sql_after)


if __name__ == "__main__":
    main()
