"""The short chaos run: file HA, 2 JobManagers, 3 TaskManagers, at least 4 TaskManager kills and 2 leader
kills in 45 s while a keyed job runs into the exactly-once Parquet sink; the committed output has no
loss, no duplicate, no per-key gap and state that agrees with it. ``make chaos`` runs the long one
(tests/chaos) with leader pauses, ZooKeeper restarts and checkpoint storage outages as well."""
from __future__ import annotations

import pytest

from tests.chaos.report import render
from tests.chaos.run import RunSpec, run
from tests.chaos.schedule import FaultKind, ScheduleSpec, count_by_kind

pytestmark = pytest.mark.serial

SHORT = ScheduleSpec(duration=45, leader_kills=2, leader_pauses=0, storage_outages=0, quiet_after_leader_s=8,
                     quiet_before_leader_s=0)  # 8 TaskManager kills in 45 s


@pytest.mark.timeout(600)
def test_a_short_chaos_run_commits_every_row_once(tmp_path):
    report = run(RunSpec("file", SHORT, seed=3, working_dir=str(tmp_path), warmup_s=35, tail_s=10))
    print("\n".join(render(report)))
    counts = count_by_kind([i.fault for i in report.injected])
    assert counts[FaultKind.TASKMANAGER_KILL] >= 4 and counts[FaultKind.LEADER_KILL] == 2, counts
    assert not report.errors and report.job_state == "FINISHED", (report.errors, report.job_state, report.job_error)
    v = report.verdict
    assert v is not None and (v.lost, v.duplicated, v.unexpected, v.keys_with_gaps) == (0, 0, 0, 0), v
    assert v.keys_with_state_mismatch == 0 and v.committed_rows == v.expected_rows, v
