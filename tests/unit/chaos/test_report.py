"""What a chaos run prints: figures per fault kind, the leader target, and PASS only for a clean verdict."""
from __future__ import annotations

from tests.chaos.checker import check
from tests.chaos.injectors import Injected
from tests.chaos.report import Report, render
from tests.chaos.schedule import Fault, FaultKind


def _report(leader_running_s: float, keys: list[int], seqs: list[int]) -> Report:
    report = Report("file", 1, 60, "standalone", planned=2, job_state="FINISHED")
    report.injected = [Injected(Fault(1, FaultKind.TASKMANAGER_KILL), 1.2),
                       Injected(Fault(5, FaultKind.LEADER_KILL), 5.1,
                                {"to_leader_s": 2.4, "to_running_s": leader_running_s})]
    report.verdict = check(keys, seqs, [s + 1 for s in seqs], expected_rows=4, num_keys=2)
    return report


def test_a_clean_run_prints_its_figures_and_pass():
    lines = render(_report(7.5, [0, 1, 0, 1], [0, 0, 1, 1]))
    assert "taskmanager-kill 1, leader-kill 1" in lines[1] and "(2 of 2 planned)" in lines[1]
    assert "leader kill -> job RUNNING on the new leader: 7.5 s (target under 10 s: met)" in lines
    assert "leader kill -> a new leader elected: 2.4 s" in lines
    assert lines[-1] == "PASS"


def test_a_duplicate_or_a_missed_target_shows_and_only_a_wrong_output_fails():
    slow = render(_report(12.0, [0, 1, 0, 1], [0, 0, 1, 1]))
    assert any("target under 10 s: MISSED" in line for line in slow) and slow[-1] == "PASS"
    duplicated = render(_report(7.5, [0, 1, 0, 1, 1], [0, 0, 1, 1, 1]))
    assert any("duplicated 1" in line for line in duplicated) and duplicated[-1] == "FAIL"


def test_a_storage_operation_by_a_fenced_out_process_fails_an_otherwise_clean_run():
    from tests.chaos.storage_audit import StorageAudit

    report = _report(7.5, [0, 1, 0, 1], [0, 0, 1, 1])
    report.audit = StorageAudit(120, 3, 0, 0, 0, 2, 3)
    lines = render(report)
    assert any(line.startswith("storage trace: 120 writes and deletes over 3 leader sessions, 3 refused") for line in lines)
    assert lines[-1] == "PASS"
    report.audit = StorageAudit(120, 3, 1, 0, 0, 2, 3, ("leaders: pid 7 delete /ck/chk-5 at 12.000",))
    lines = render(report)
    assert "  leaders: pid 7 delete /ck/chk-5 at 12.000" in lines and lines[-1] == "FAIL"
