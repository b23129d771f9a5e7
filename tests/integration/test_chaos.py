"""The short chaos run, with gray failures: file HA, 2 JobManagers, 3 TaskManagers; in 60 s a leader kill, a
leader stopped (SIGSTOP) for 8 s inside a checkpoint and continued, a TaskManager stopped past the
heartbeat timeout and continued, and TaskManager kills between them, some timed to a checkpoint's trigger,
acknowledgements or commit, while a keyed job runs into the exactly-once Parquet sink. The committed
output has no loss, no duplicate, no per-key gap and state that agrees with it, and the storage trace
shows no write or delete by a process that had lost its leadership or whose attempt was superseded.
``make chaos`` runs the long one (tests/chaos) with ZooKeeper restarts and checkpoint storage outages too."""
from __future__ import annotations

import pytest

from tests.chaos.report import render
from tests.chaos.run import RunSpec, run
from tests.chaos.schedule import KILLS, FaultKind, ScheduleSpec, count_by_kind

pytestmark = pytest.mark.serial

SHORT = ScheduleSpec(duration=60, leader_kills=1, leader_pauses=1, storage_outages=0, taskmanager_pauses=1,
                     timed_kills=True, pause_range=(8.0, 8.0), quiet_after_leader_s=8, quiet_before_leader_s=0)


@pytest.mark.timeout(900)
def test_a_short_gray_chaos_run_commits_every_row_once_and_no_fenced_out_process_touches_storage(tmp_path):
    report = run(RunSpec("file", SHORT, seed=2, working_dir=str(tmp_path), warmup_s=35, tail_s=10, trace=True))
    print("\n".join(render(report)))
    counts = count_by_kind([i.fault for i in report.injected])
    assert sum(counts[k] for k in KILLS) >= 4 and counts[FaultKind.LEADER_KILL] == 1, counts
    assert counts[FaultKind.LEADER_PAUSE] == 1 and counts[FaultKind.TASKMANAGER_PAUSE] == 1, counts
    assert not report.errors and report.job_state == "FINISHED", (report.errors, report.job_state, report.job_error)
    v = report.verdict
    assert v is not None and (v.lost, v.duplicated, v.unexpected, v.keys_with_gaps) == (0, 0, 0, 0), v
    assert v.keys_with_state_mismatch == 0 and v.committed_rows == v.expected_rows, v
    assert report.audit is not None and report.audit.ok and report.audit.operations > 0, report.audit
