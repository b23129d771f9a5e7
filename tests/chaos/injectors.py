"""Fault injectors acting on the real processes and files of a chaos run, each returning what it measured.

- TaskManager kill: SIGKILL one TaskManager's process group (its Spark JVM with it). The run uses the
  ``standalone`` resource provider, so the harness starts the replacement, as a supervisor would; the
  next kill waits until three TaskManagers are registered again, so at most one is down at a time.
- Leader kill: SIGKILL the leading JobManager; measured until a standby serves the job running (every
  subtask RUNNING, or FINISHED once its input ended: tests.chaos.probes.running). Then the harness starts
  another standby.
- Leader pause: SIGSTOP the leader while a checkpoint it triggered is in progress (split brain: it still
  believes it leads, and wakes up with that checkpoint to time out), measured until the standby serves
  the job RUNNING; then SIGCONT, measured until the old leader says it is a standby.
- TaskManager pause: SIGSTOP one TaskManager's process group (its Spark JVM too, as a frozen machine) for
  longer than the heartbeat timeout, then SIGCONT; measured until the job runs again (the JobManager
  declared it lost meanwhile; it registers again).
- TaskManager kills timed to a checkpoint: as soon as one is seen in progress, 20-150 ms after that
  (while its acknowledgements come in), or as soon as one is seen completed (while the sinks commit).
  The phases are seen through REST polled every 10 ms, so a kill lands within tens of milliseconds.
- ZooKeeper restart: SIGKILL the server, start it again on the same port and data after a while;
  measured until one JobManager serves the job RUNNING.
- Checkpoint storage outage: the checkpoint directory is renamed aside and a plain file put in its
  place, so every write below it fails with ENOTDIR, also for root (which directory permissions would
  not stop); then the file is removed and the directory moved back. Measured: checkpoints failed during
  the outage, and the time from the repair to the next completed checkpoint.
"""
from __future__ import annotations

import os
import random
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from runtime.cluster import LocalCluster
from tests.chaos import probes
from tests.chaos.schedule import Fault, FaultKind
from tests.helpers.zookeeper import ZooKeeperServer

TASKMANAGERS = 3
RECOVERY_TIMEOUT_S = 180.0


@dataclass
class Injected:
    """One fault as it happened: when (seconds into the run), and what was measured (seconds)."""
    fault: Fault
    at: float
    figures: dict[str, float] = field(default_factory=dict)
    note: str = ""


class CheckpointStorage:
    """The checkpoint directory, and the outage of it: a file where the directory should be."""

    def __init__(self, directory: str):
        self.directory = directory
        self.aside = directory + ".aside"
        os.makedirs(directory, exist_ok=True)

    def break_(self) -> None:
        os.rename(self.directory, self.aside)
        with open(self.directory, "w") as fh:
            fh.write("checkpoint storage outage: a file where the checkpoint directory should be\n")

    def repair(self) -> None:
        if os.path.isfile(self.directory):
            os.remove(self.directory)
        if os.path.isdir(self.aside):
            os.rename(self.aside, self.directory)

    @property
    def broken(self) -> bool:
        return os.path.isfile(self.directory)


class Injectors:
    """Carries out one fault at a time on ``cluster`` running job ``job_id``."""

    def __init__(self, cluster: LocalCluster, job_id: str, storage: CheckpointStorage,
                 zookeeper: ZooKeeperServer | None, rng: random.Random, log=print, settle: bool = False):
        self.cluster = cluster
        self.settle = settle  # before a leader fault, wait until the job runs (replacements' JVMs are up)
        self.job_id = job_id
        self.storage = storage
        self.zookeeper = zookeeper
        self.rng = rng
        self.log = log

    def inject(self, fault: Fault, at: float) -> Injected:
        done = Injected(fault, at)
        handler = {FaultKind.TASKMANAGER_KILL: self.kill_taskmanager, FaultKind.LEADER_KILL: self.kill_leader,
                   FaultKind.LEADER_PAUSE: self.pause_leader, FaultKind.ZOOKEEPER_RESTART: self.restart_zookeeper,
                   FaultKind.STORAGE_OUTAGE: self.storage_outage, FaultKind.TASKMANAGER_PAUSE: self.pause_taskmanager,
                   FaultKind.KILL_AFTER_TRIGGER: self.kill_in_checkpoint, FaultKind.KILL_DURING_ACK: self.kill_in_checkpoint,
                   FaultKind.KILL_DURING_COMMIT: self.kill_in_checkpoint}[fault.kind]
        handler(fault, done)
        self.log(f"  {at:7.1f} s  {fault.kind.value:<18} {done.note}")
        return done

    # -- TaskManagers -------------------------------------------------------------------------
    def kill_taskmanager(self, fault: Fault, done: Injected, when: Callable[[], str] = lambda: "") -> None:
        registered, waited = probes.wait_for(lambda: self._registered_children(), RECOVERY_TIMEOUT_S,
                                             f"{TASKMANAGERS} registered TaskManagers")
        victim = self.rng.choice(registered)
        moment = when()
        victim.kill()
        self.cluster.add_taskmanager(wait=False)  # standalone provider: the harness replaces it
        done.figures["waited_for_replacement_s"] = waited
        done.note = f"SIGKILL {victim.name} (pid {victim.pid}){moment}; a replacement started"

    def kill_in_checkpoint(self, fault: Fault, done: Injected) -> None:
        """A TaskManager kill timed to a checkpoint's trigger, acknowledgements or commit (the fault's kind)."""
        def when() -> str:
            if fault.kind is FaultKind.KILL_DURING_COMMIT:
                before = self._counts()["completed"]
                _, took = probes.wait_for(lambda: self._counts()["completed"] > before, RECOVERY_TIMEOUT_S,
                                          "a checkpoint to complete", interval=0.01)
                return f" as a checkpoint completed ({took:.1f} s wait)"
            _, took = probes.wait_for(lambda: self._counts()["in_progress"] > 0, RECOVERY_TIMEOUT_S,
                                      "a checkpoint in progress", interval=0.01)
            delay = self.rng.uniform(0.02, 0.15) if fault.kind is FaultKind.KILL_DURING_ACK else 0.0
            time.sleep(delay)
            return f" {delay * 1000:.0f} ms after a checkpoint was seen triggered ({took:.1f} s wait)"
        self.kill_taskmanager(fault, done, when)

    def pause_taskmanager(self, fault: Fault, done: Injected) -> None:
        registered, _ = probes.wait_for(lambda: self._registered_children(), RECOVERY_TIMEOUT_S,
                                        f"{TASKMANAGERS} registered TaskManagers")
        victim = self.rng.choice(registered)
        victim.signal_group(signal.SIGSTOP)
        try:
            time.sleep(fault.duration)
        finally:
            victim.signal_group(signal.SIGCONT)
        _, took = probes.wait_for(lambda: probes.job_running_at(self.cluster, self.job_id), RECOVERY_TIMEOUT_S,
                                  "the job RUNNING after the TaskManager pause", interval=0.05)
        done.figures["to_running_s"] = took
        done.note = (f"SIGSTOP {victim.name} and its JVM for {fault.duration:g} s (past heartbeat.timeout), then "
                     f"SIGCONT; the job RUNNING {took:.1f} s later")

    def _registered_children(self):
        pids = {tm["pid"] for tm in probes.registered_taskmanagers(self.cluster)}
        children = [tm for tm in self.cluster.taskmanagers if tm.alive() and tm.pid in pids]
        return children if len(children) >= TASKMANAGERS else None

    # -- the leader ---------------------------------------------------------------------------
    def _settle(self) -> None:
        if self.settle:
            probes.wait_for(lambda: probes.job_running_at(self.cluster, self.job_id), RECOVERY_TIMEOUT_S,
                            "the job RUNNING before a leader or ZooKeeper fault")

    def _leader(self) -> str:
        self._settle()
        return probes.wait_for(lambda: probes.leader(self.cluster), RECOVERY_TIMEOUT_S, "a leader")[0]

    def kill_leader(self, fault: Fault, done: Injected) -> None:
        old = self._leader()
        self.cluster.kill_jobmanager(old)
        _, elected = probes.wait_for(lambda: probes.leader(self.cluster), RECOVERY_TIMEOUT_S, "a new leader",
                                     interval=0.05)
        new, took = probes.wait_for(lambda: probes.job_running_at(self.cluster, self.job_id), RECOVERY_TIMEOUT_S,
                                    "the job RUNNING under a new leader", interval=0.05)
        done.figures["to_leader_s"] = elected
        done.figures["to_running_s"] = elected + took
        self.cluster.start_jobmanager()
        done.note = (f"SIGKILL leader {old}; a new leader {elected:.1f} s later, the job RUNNING at {new} "
                     f"after {elected + took:.1f} s; another standby started")

    def pause_leader(self, fault: Fault, done: Injected) -> None:
        old = self._leader()
        process = self.cluster.jobmanager_at(old)
        inside = _seen(lambda: (probes.checkpoint_counts(self.cluster, self.job_id) or {}).get("in_progress"), 10.0)
        os.kill(process.pid, signal.SIGSTOP)
        start = time.monotonic()
        try:
            new, took = probes.wait_for(lambda: probes.job_running_at(self.cluster, self.job_id, skip=(old,)),
                                        RECOVERY_TIMEOUT_S, "the job RUNNING under the standby", interval=0.05)
            time.sleep(max(0.0, fault.duration - (time.monotonic() - start)))
        finally:
            os.kill(process.pid, signal.SIGCONT)
        _, stood_down = probes.wait_for(lambda: probes.roles(self.cluster).get(old) == "standby", RECOVERY_TIMEOUT_S,
                                        "the paused leader to stand by")
        done.figures["to_running_s"] = took
        done.figures["stood_down_after_resume_s"] = stood_down
        done.figures["inside_checkpoint"] = float(inside)
        leaders = [url for url, role in probes.roles(self.cluster).items() if role == "leader"]
        if leaders != [new]:
            raise AssertionError(f"after the paused leader resumed, the leaders are {leaders}, not [{new}]")
        done.note = (f"SIGSTOP leader {old} for {fault.duration:g} s{' inside a checkpoint' if inside else ''}; "
                     f"job RUNNING at {new} after {took:.1f} s; "
                     f"the old leader stood by {stood_down:.1f} s after SIGCONT")

    # -- ZooKeeper ----------------------------------------------------------------------------
    def restart_zookeeper(self, fault: Fault, done: Injected) -> None:
        if self.zookeeper is None:
            raise ValueError("a ZooKeeper restart was scheduled for a run without ZooKeeper")
        self._settle()
        self.zookeeper.kill()
        time.sleep(fault.duration)
        self.zookeeper.start()
        url, took = probes.wait_for(lambda: self._served_by_one_leader(), RECOVERY_TIMEOUT_S,
                                    "one leader serving the job RUNNING", interval=0.05)
        done.figures["to_running_s"] = took
        done.note = f"ZooKeeper down {fault.duration:g} s; job RUNNING at {url} {took:.1f} s after its restart"

    def _served_by_one_leader(self) -> str | None:
        url = probes.job_running_at(self.cluster, self.job_id)
        return url if url is not None and probes.leader(self.cluster) == url else None

    # -- checkpoint storage -------------------------------------------------------------------
    def storage_outage(self, fault: Fault, done: Injected) -> None:
        before = self._counts()
        self.storage.break_()
        try:
            time.sleep(fault.duration)
            during = self._counts()
        finally:
            self.storage.repair()
        failed = during["failed"] - before["failed"]
        _, took = probes.wait_for(lambda: (c := probes.checkpoint_counts(self.cluster, self.job_id))
                                  and c["completed"] > during["completed"], RECOVERY_TIMEOUT_S,
                                  "a completed checkpoint after the storage came back")
        done.figures["checkpoints_failed"] = failed
        done.figures["next_checkpoint_after_s"] = took
        done.note = (f"checkpoint directory a file for {fault.duration:g} s: {failed} checkpoints failed; "
                     f"the next completed {took:.1f} s after the repair")

    def _counts(self) -> dict:
        """The serving leader's checkpoint counts (waits while none answers)."""
        return probes.wait_for(lambda: probes.checkpoint_counts(self.cluster, self.job_id), RECOVERY_TIMEOUT_S,
                               "the job's checkpoint counts")[0]


def _seen(condition: Callable[[], object], timeout: float) -> bool:
    """Whether ``condition`` held within ``timeout`` (polled every 10 ms)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.01)
    return False
