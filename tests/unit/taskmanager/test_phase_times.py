"""Per-phase times of a task: what the task reports and how the REST layer sums a task's subtasks."""
from runtime.ids import ExecutionAttemptId, JobId
from runtime.jobmanager.rest.convert import io_metrics
from runtime.taskmanager.metrics import PhaseTimes, TaskMetricsTracker


def test_totals_and_counts_accumulate_and_the_longest_resets_with_each_report():
    phases = PhaseTimes()
    phases.add("spark_action", 0.5)
    phases.add("spark_action", 0.25)
    phases.add("exchange_send", 0.1)
    totals, counts, longest = phases.report()
    assert totals == {"spark_action": 0.75, "exchange_send": 0.1}
    assert counts == {"spark_action": 2, "exchange_send": 1}
    assert longest == {"spark_action": 0.5, "exchange_send": 0.1}
    phases.add("spark_action", 0.2)
    totals, counts, longest = phases.report()
    assert totals["spark_action"] == 0.95 and counts["spark_action"] == 3
    assert longest == {"spark_action": 0.2}


def test_a_phase_block_counts_its_time_even_when_it_raises():
    phases = PhaseTimes()
    try:
        with phases.phase("window_merge"):
            raise KeyError("user")
    except KeyError:
        pass
    assert phases.report()[1] == {"window_merge": 1}


def test_the_report_carries_phases_and_pending_records_and_a_task_sums_its_subtasks():
    job = JobId.new()
    reports = []
    for seconds, pending in ((1.0, 10), (3.0, 5)):
        tracker = TaskMetricsTracker()
        tracker.start()
        tracker.phases.add("spark_action", seconds)
        tracker.pending_records = pending
        reports.append(tracker.snapshot(job, ExecutionAttemptId.new(), 0.0, 0, 0))
    assert reports[0].phase_s == {"spark_action": 1.0} and reports[0].pending_records == 10
    merged = io_metrics(reports)
    assert merged.phase_s == {"spark_action": 4.0}
    assert merged.phase_count == {"spark_action": 2}
    assert merged.phase_max_s == {"spark_action": 3.0}
    assert merged.pending_records == 15
