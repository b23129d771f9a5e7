"""What a chaos run prints: the faults by kind, recovery times, and the verdict on the output. Pure."""
from __future__ import annotations

from dataclasses import dataclass, field

from tests.chaos.checker import Verdict
from tests.chaos.injectors import Injected
from tests.chaos.schedule import FaultKind, count_by_kind
from tests.chaos.storage_audit import StorageAudit

LEADER_TARGET_S = 10.0


@dataclass
class Report:
    ha: str
    seed: int
    duration_s: float
    provider: str
    injected: list[Injected] = field(default_factory=list)
    planned: int = 0  # faults in the schedule
    job_state: str | None = None
    job_error: str = ""
    errors: list[str] = field(default_factory=list)  # recoveries that did not happen, and other failures
    verdict: Verdict | None = None
    checkpoints: dict = field(default_factory=dict)  # the last leader's counts
    audit: StorageAudit | None = None  # the storage trace's verdict, when the run traced
    last_checkpoint_failure: str = ""  # why the last leader's latest failed checkpoint failed

    def times(self, kind: FaultKind, figure: str = "to_running_s") -> list[float]:
        return [i.figures[figure] for i in self.injected if i.fault.kind is kind and figure in i.figures]

    @property
    def ok(self) -> bool:
        return (not self.errors and self.job_state == "FINISHED" and len(self.injected) == self.planned
                and self.verdict is not None and self.verdict.ok and (self.audit is None or self.audit.ok))


def _seconds(values: list[float]) -> str:
    return ", ".join(f"{v:.1f} s" for v in values) if values else "none"


def render(report: Report) -> list[str]:
    """The run's figures, one line each; the last line says PASS or FAIL and why."""
    counts = count_by_kind([i.fault for i in report.injected])
    lines = [f"chaos run, {report.ha} HA: 2 JobManagers, 3 TaskManagers x 2 slots, resource provider "
             f"'{report.provider}' (the harness starts a replacement for every killed process), seed {report.seed}, "
             f"{report.duration_s:g} s of faults",
             "faults injected: " + ", ".join(f"{kind.value} {n}" for kind, n in counts.items())
             + f" ({len(report.injected)} of {report.planned} planned)"]
    kills = report.times(FaultKind.LEADER_KILL)
    met = "met" if kills and max(kills) < LEADER_TARGET_S else "MISSED" if kills else "n/a"
    lines.append(f"leader kill -> job RUNNING on the new leader: {_seconds(kills)} "
                 f"(target under {LEADER_TARGET_S:g} s: {met})")
    for kind, figure, label in (
            (FaultKind.LEADER_KILL, "to_leader_s", "leader kill -> a new leader elected"),
            (FaultKind.LEADER_PAUSE, "to_running_s", "leader paused (SIGSTOP) -> job RUNNING on the standby"),
            (FaultKind.LEADER_PAUSE, "stood_down_after_resume_s", "paused leader resumed (SIGCONT) -> it stands by"),
            (FaultKind.ZOOKEEPER_RESTART, "to_running_s", "ZooKeeper restarted -> one leader, job RUNNING"),
            (FaultKind.STORAGE_OUTAGE, "checkpoints_failed", "checkpoints failed while the storage was out"),
            (FaultKind.STORAGE_OUTAGE, "next_checkpoint_after_s", "storage repaired -> next completed checkpoint"),
            (FaultKind.LEADER_PAUSE, "inside_checkpoint", "leader paused while a checkpoint was in progress (1 = yes)"),
            (FaultKind.TASKMANAGER_PAUSE, "to_running_s", "TaskManager paused past the heartbeat timeout -> job RUNNING")):
        values = report.times(kind, figure)
        if values:
            counted = figure in ("checkpoints_failed", "inside_checkpoint")
            shown = ", ".join(f"{v:g}" for v in values) if counted else _seconds(values)
            lines.append(f"{label}: {shown}")
    if report.checkpoints:
        lines.append("checkpoints under the last leader: " + ", ".join(
            f"{k} {report.checkpoints[k]}" for k in ("completed", "failed", "restored") if k in report.checkpoints))
    if report.last_checkpoint_failure:
        lines.append(f"  the latest failed: {report.last_checkpoint_failure[:300]}")
    lines.append(f"job: {report.job_state or 'unknown'}" + (f" ({report.job_error})" if report.job_error else ""))
    v = report.verdict
    if v is not None:
        lines.append(f"rows expected {v.expected_rows:,}, committed {v.committed_rows:,}: lost {v.lost}, "
                     f"duplicated {v.duplicated}, unexpected {v.unexpected}, keys with gaps {v.keys_with_gaps}, "
                     f"keys whose state count disagrees {v.keys_with_state_mismatch}")
        lines += [f"  {example}" for example in v.gap_examples]
    lines += _audit_lines(report.audit)
    lines += [f"error: {e}" for e in report.errors]
    lines.append("PASS" if report.ok else "FAIL")
    return lines


def _audit_lines(a: StorageAudit | None) -> list[str]:
    if a is None:
        return []
    return [f"storage trace: {a.operations:,} writes and deletes over {a.sessions} leader sessions, {a.refused} refused "
            f"by a fence, {a.late_aside} late uploads written aside; by a deposed leader {a.by_deposed_leaders}, "
            f"by a superseded attempt {a.by_superseded_attempts}, unfenced {a.unfenced}",
            *(f"  {example}" for example in a.examples)]
