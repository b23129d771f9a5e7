"""One chaos run: a real cluster (2 JobManagers with file or ZooKeeper HA, 3 TaskManagers), the keyed
job of tests.chaos.job, the faults of a seeded schedule injected one after another while it runs, then
the committed output checked. With ``trace`` every process records its storage operations
(runtime.checkpoint.trace) and the run also checks that none was made by a process that had lost its
leadership or whose attempt was superseded (tests.chaos.storage_audit). Used by ``make chaos``
(python -m tests.chaos) and by the short variant in the suite (tests/integration/test_chaos.py)."""
from __future__ import annotations

import os
import random
import time
from dataclasses import dataclass
from pathlib import Path

from runtime.checkpoint import trace as storage_trace
from runtime.cluster import LocalCluster
from tests.chaos import job as chaos_job
from tests.chaos import probes
from tests.chaos.checker import check
from tests.chaos.injectors import CheckpointStorage, Injectors
from tests.chaos.report import Report
from tests.chaos.schedule import ScheduleSpec, build_schedule
from tests.chaos.storage_audit import audit, read_trace
from tests.helpers.pacing import Pace
from tests.helpers.zookeeper import ZooKeeperServer

LEASE_S = 2.0
PROVIDER = "standalone"
START_TIMEOUT_S = 300.0


@dataclass(frozen=True)
class RunSpec:
    ha: str  # "file" or "zookeeper"
    schedule: ScheduleSpec
    seed: int
    working_dir: str
    rows_per_second: float = 400.0  # the input's pace while the faults go on (both source subtasks together)
    keys: int = 20
    tail_s: float = 20.0  # paced input beyond the last fault's time: the input outlasts the faults
    settle: bool = False  # leader faults wait for the job to run, so their figures time the leader change
    warmup_s: float = 60.0  # paced input for the first deployment, before the faults' schedule starts
    trace: bool = False  # record every storage operation and audit them (gray failures)

    @property
    def rows(self) -> int:
        return int(self.rows_per_second * (self.warmup_s + self.schedule.duration + self.tail_s))


def cluster_config(ha: str, storage: CheckpointStorage, working_dir: str, quorum: str | None) -> dict:
    config = {"heartbeat.interval": "500 ms", "heartbeat.timeout": "3 s", "cluster.fault-injection.enabled": "true",
              "high-availability.type": ha, "high-availability.lease-duration": f"{LEASE_S:g} s",
              "high-availability.storageDir": os.path.join(working_dir, "ha"),
              "state.checkpoints.dir": storage.directory, "resourcemanager.provider": PROVIDER,
              "restart-strategy.fixed-delay.delay": "200 ms", "spark.driver.memory": "512m"}
    if quorum:
        config["high-availability.zookeeper.quorum"] = quorum
    return config


def run(spec: RunSpec, log=print) -> Report:
    """The whole run; never raises for what the cluster does wrong: the report says it."""
    faults = build_schedule(spec.schedule, spec.seed)
    report = Report(spec.ha, spec.seed, spec.schedule.duration, PROVIDER, planned=len(faults))
    os.makedirs(spec.working_dir, exist_ok=True)
    storage = CheckpointStorage(os.path.join(spec.working_dir, "checkpoint-storage"))
    zookeeper = ZooKeeperServer(_mkdir(spec.working_dir, "zookeeper")) if spec.ha == "zookeeper" else None
    trace_file = os.path.join(spec.working_dir, "storage-trace.jsonl") if spec.trace else None
    if trace_file:
        os.environ[storage_trace.ENV] = trace_file  # every process of the cluster inherits it
    try:
        if zookeeper is not None:
            zookeeper.start()
        config = cluster_config(spec.ha, storage, spec.working_dir, zookeeper.quorum if zookeeper else None)
        with LocalCluster(taskmanagers=3, slots=2, jobmanagers=2, config=config,
                          working_dir=_mkdir(spec.working_dir, "cluster")) as cluster:
            _run_on(cluster, spec, faults, storage, zookeeper, report, log)
    finally:
        storage.repair()
        if zookeeper is not None:
            zookeeper.kill()
        os.environ.pop(storage_trace.ENV, None)
    if trace_file:
        report.audit = audit(read_trace(trace_file)) if os.path.exists(trace_file) else None
        if report.audit is None:
            report.errors.append(f"no storage trace at {trace_file}")
    return report


def _mkdir(base: str, name: str):
    path = Path(base) / name
    path.mkdir(parents=True, exist_ok=True)
    return path


def _run_on(cluster: LocalCluster, spec: RunSpec, faults, storage, zookeeper, report: Report, log) -> None:
    out = os.path.join(spec.working_dir, "output")
    started = time.monotonic()
    env = cluster.environment()
    rows = spec.rows
    pace = Pace(Path(spec.working_dir) / "pace", spec.rows_per_second / chaos_job.SOURCE_PARALLELISM)
    chaos_job.build(env, out, rows, spec.keys, pace)
    job_id = env.execute_async(f"chaos ({spec.ha} HA)").job_id
    _, ready = probes.wait_for(lambda: (c := probes.checkpoint_counts(cluster, job_id)) and c["completed"] > 0,
                               START_TIMEOUT_S, "the job's first completed checkpoint")
    log(f"job {job_id}: {rows:,} rows at {spec.rows_per_second:g}/s over {spec.keys} keys; "
        f"first checkpoint {ready:.1f} s after submission; {len(faults)} faults to inject")
    injectors = Injectors(cluster, job_id, storage, zookeeper, random.Random(spec.seed), log, spec.settle)
    _inject_all(injectors, faults, report)
    pace.lift()  # the faults are over: the rest of the input at full speed
    # As planned, or, when recoveries made the faults overrun their schedule (a loaded machine), from their end:
    # the job still has to recover from the last one and read the rest of its input.
    deadline = max(started + spec.warmup_s + spec.schedule.duration + spec.tail_s, time.monotonic()) + START_TIMEOUT_S
    _await_end(cluster, job_id, deadline, report)
    report.checkpoints = probes.checkpoint_counts(cluster, job_id) or {}
    report.last_checkpoint_failure = probes.last_checkpoint_failure(cluster, job_id)
    if os.path.isdir(out):
        report.verdict = check(*chaos_job.committed_columns(out), expected_rows=rows, num_keys=spec.keys)
    else:
        report.errors.append(f"no output directory {out}")


def _inject_all(injectors: Injectors, faults, report: Report) -> None:
    """Each fault at its time (or once the one before has recovered); stops at the first that fails."""
    start = time.monotonic()
    for fault in faults:
        time.sleep(max(0.0, start + fault.at - time.monotonic()))
        state = probes.job_state(injectors.cluster, injectors.job_id)
        if state in ("FINISHED", "FAILED", "CANCELED"):
            report.errors.append(f"the job was {state} after {time.monotonic() - start:.0f} s, before every fault")
            return
        try:
            report.injected.append(injectors.inject(fault, time.monotonic() - start))
        except (TimeoutError, AssertionError) as err:
            report.errors.append(f"{fault.kind.value} at {fault.at:g} s: {err}")
            return


def _await_end(cluster: LocalCluster, job_id: str, deadline: float, report: Report) -> None:
    while time.monotonic() < deadline:
        state = probes.job_state(cluster, job_id)
        if state in ("FINISHED", "FAILED", "CANCELED"):
            report.job_state = state
            if state != "FINISHED":
                report.job_error = str(cluster.client.get(f"/jobs/{job_id}/exceptions").get("root-exception"))[:500]
            return
        time.sleep(0.5)
    report.job_state = probes.job_state(cluster, job_id)
    report.errors.append(f"the job did not end in time (still {report.job_state})")
