"""Every transition of the job failover state machine, including the odd orders, without processes."""
import pytest

from runtime.ids import AllocationId, TaskManagerId
from runtime.jobgraph import EdgeSpec, JobGraph, OperatorSpec
from runtime.jobmanager import failover_events as ev
from runtime.jobmanager.execution_graph import ExecutionGraph
from runtime.jobmanager.failover import CANCEL_WAIT_S, JobFailover
from runtime.jobmanager.gateways import AllocatedSlot
from runtime.jobmanager.restart import FixedDelay, RestartStrategy
from runtime.states import ExecutionState as E
from runtime.states import JobStatus as J


def machine(strategy=None) -> JobFailover:
    """source x2 -> hash -> sink x1: three attempts over two slots."""
    g = JobGraph("g", [OperatorSpec("src", "src", "source", 2), OperatorSpec("snk", "snk", "sink", 1)],
                 [EdgeSpec("src", "snk", "hash", ["k"])])
    g.validate(1)
    return JobFailover(ExecutionGraph(g), strategy or FixedDelay(3, 1.5))


def slots(*tms):
    return [AllocatedSlot(AllocationId(f"alloc-{i}"), TaskManagerId(tm), i, "127.0.0.1", 1, None)
            for i, tm in enumerate(tms)]


def kinds(actions):
    return [type(a).__name__ for a in actions]


def attempts(m):
    return [ex for _, ex in m.eg.executions()]


def running(strategy=None, tms=("tm-a", "tm-b")) -> JobFailover:
    m = machine(strategy)
    m.handle(ev.JobStarted())
    m.handle(ev.SlotsGranted(0, slots(*tms)))
    for ex in attempts(m):
        m.handle(ev.TaskReported(ex.attempt_id, E.RUNNING))
    assert m.status == J.RUNNING and all(ex.state == E.RUNNING for ex in attempts(m))
    return m


def confirm_cancels(m):
    out = []
    for ex in attempts(m):
        if ex.state == E.CANCELING:
            out += m.handle(ev.TaskReported(ex.attempt_id, E.CANCELED))
    return out


def test_start_requests_one_slot_per_subtask_of_the_widest_task():
    m = machine()
    assert m.handle(ev.JobStarted()) == [ev.JobStatusChanged(J.INITIALIZING, J.CREATED, None), ev.RequestSlots(0, 2)]


def test_granted_slots_are_assigned_by_subtask_index_and_every_attempt_is_deployed():
    m = machine()
    m.handle(ev.JobStarted())
    out = m.handle(ev.SlotsGranted(0, slots("tm-a", "tm-b")))
    assert out[:2] == [ev.AssignTasks(AllocationId("alloc-0"), ("src", "snk")), ev.AssignTasks(AllocationId("alloc-1"), ("src",))]
    assert kinds(out)[2:] == ["TaskStateChanged"] * 3 + ["JobStatusChanged"] + ["TaskStateChanged"] * 3 + \
        ["DeployTasks", "StartCheckpointing"]
    assert [ex.tm_id for ex in attempts(m)] == ["tm-a", "tm-b", "tm-a"]
    assert m.status == J.RUNNING and all(ex.state == E.DEPLOYING for ex in attempts(m))
    assert out[-2] == ev.DeployTasks(tuple(ex.attempt_id for ex in attempts(m)))


def test_the_job_finishes_when_its_last_task_does():
    m = running()
    *rest, last = attempts(m)
    for ex in rest:
        assert kinds(m.handle(ev.TaskReported(ex.attempt_id, E.FINISHED))) == ["TaskStateChanged"]
    out = m.handle(ev.TaskReported(last.attempt_id, E.FINISHED))
    assert out[-2:] == [ev.JobStatusChanged(J.RUNNING, J.FINISHED, None), ev.JobTerminated(J.FINISHED)]


def test_a_failed_task_restarts_the_job_after_every_attempt_stopped_and_the_delay_passed():
    m = running()
    failed, *others = attempts(m)
    out = m.handle(ev.TaskReported(failed.attempt_id, E.FAILED, "Traceback ...\nValueError: bad row"), now=10.0)
    assert kinds(out) == ["TaskStateChanged", "RecordFailure", "StopCheckpointing", "JobStatusChanged", "JobRestarting",
                          "TaskStateChanged", "CancelTask", "TaskStateChanged", "CancelTask", "ScheduleCancelTimeout"]
    assert out[1] == ev.RecordFailure("Traceback ...\nValueError: bad row", "ValueError", failed.attempt_id)
    assert out[2] == ev.StopCheckpointing("job failover: ValueError: bad row")
    assert out[4] == ev.JobRestarting(1, "Traceback ...\nValueError: bad row", 1.5)
    assert out[-1] == ev.ScheduleCancelTimeout(0, CANCEL_WAIT_S)
    assert m.status == J.RESTARTING and [ex.state for ex in others] == [E.CANCELING, E.CANCELING]
    assert m.handle(ev.RestartDelayPassed(0)) == []  # not before every attempt stopped
    assert confirm_cancels(m)[-2:] == [ev.FreeSlots(), ev.ScheduleRestart(0, 1.5)]
    out = m.handle(ev.RestartDelayPassed(0))
    assert out == [ev.JobStatusChanged(J.RESTARTING, J.CREATED, None), ev.RequestSlots(1, 2)]
    assert m.restarts == 1 and all(ex.state == E.CREATED and ex.attempt_number == 1 for ex in attempts(m))
    assert failed.attempt_id not in {ex.attempt_id for ex in attempts(m)}


def test_without_restarts_left_the_job_fails_once_its_attempts_stopped():
    m = running(RestartStrategy())
    first = attempts(m)[0]
    out = m.handle(ev.TaskReported(first.attempt_id, E.FAILED, "boom"))
    assert ev.JobStatusChanged(J.RUNNING, J.FAILING, "boom") in out and m.status == J.FAILING
    out = confirm_cancels(m)
    assert out[-2:] == [ev.JobStatusChanged(J.FAILING, J.FAILED, "boom"), ev.JobTerminated(J.FAILED)]


def test_a_fixed_delay_strategy_gives_up_after_its_attempts():
    m = running(FixedDelay(1, 0.0))
    m.handle(ev.TaskReported(attempts(m)[0].attempt_id, E.FAILED, "one"))
    confirm_cancels(m)
    m.handle(ev.RestartDelayPassed(0))
    m.handle(ev.SlotsGranted(1, slots("tm-a", "tm-b")))
    m.handle(ev.TaskReported(attempts(m)[1].attempt_id, E.FAILED, "two"))
    assert m.status == J.FAILING


def test_a_failure_during_restart_joins_the_restart_instead_of_starting_another():
    m = running()
    a, b, c = attempts(m)
    m.handle(ev.TaskReported(a.attempt_id, E.FAILED, "first"))
    out = m.handle(ev.TaskReported(b.attempt_id, E.FAILED, "second while cancelling"))
    assert out == [ev.TaskStateChanged(b.attempt_id, E.CANCELED, "second while cancelling")]
    out = m.handle(ev.TaskReported(c.attempt_id, E.CANCELED))
    assert out[-2:] == [ev.FreeSlots(), ev.ScheduleRestart(0, 1.5)]
    assert m.handle(ev.TaskManagerLost(TaskManagerId("tm-a"), "lost during the delay")) == []
    assert m.status == J.RESTARTING and m.strategy.used == 1


def test_a_lost_task_manager_fails_every_attempt_on_it_and_restarts_once():
    m = running()
    out = m.handle(ev.TaskManagerLost(TaskManagerId("tm-a"), "TaskManager tm-a lost: no heartbeat"))
    assert kinds(out).count("JobRestarting") == 1 and kinds(out).count("RecordFailure") == 1
    on_a = [ex for ex in attempts(m) if ex.tm_id == "tm-a"]
    assert [ex.state for ex in on_a] == [E.FAILED, E.FAILED]
    (on_b,) = [ex for ex in attempts(m) if ex.tm_id == "tm-b"]
    assert on_b.state == E.CANCELING and ev.CancelTask(on_b.attempt_id) in out


def test_cancel_during_the_restart_delay_ends_the_job_and_the_timer_finds_nothing_to_do():
    m = running()
    m.handle(ev.TaskReported(attempts(m)[0].attempt_id, E.FAILED, "x"))
    confirm_cancels(m)
    out = m.handle(ev.CancelRequested())
    assert out[-2:] == [ev.JobStatusChanged(J.CANCELLING, J.CANCELED, None), ev.JobTerminated(J.CANCELED)]
    assert ev.CancelSlotRequest() not in out
    assert m.handle(ev.RestartDelayPassed(0)) == [] and m.status == J.CANCELED


def test_cancel_while_waiting_for_slots_withdraws_the_request_and_gives_back_a_late_grant():
    m = machine()
    m.handle(ev.JobStarted())
    out = m.handle(ev.CancelRequested())
    assert ev.CancelSlotRequest() in out and out[-1] == ev.JobTerminated(J.CANCELED)
    assert m.handle(ev.SlotsGranted(0, slots("tm-a", "tm-b"))) == [ev.FreeSlots()]
    assert m.handle(ev.SlotsUnavailable(0, "cancelled")) == []


def test_cancelling_a_running_job_waits_for_confirmations_or_the_timeout():
    m = running()
    out = m.handle(ev.CancelRequested())
    assert kinds(out).count("CancelTask") == 3 and out[-1] == ev.ScheduleCancelTimeout(0, CANCEL_WAIT_S)
    assert m.handle(ev.CancelRequested()) == []  # a second cancel waits for the first
    first = attempts(m)[0]
    assert m.handle(ev.TaskReported(first.attempt_id, E.FINISHED)) == [ev.TaskStateChanged(first.attempt_id, E.CANCELED, None)]
    out = m.handle(ev.CancelTimedOut(0))
    assert [a.error for a in out if isinstance(a, ev.TaskStateChanged)] == ["did not confirm cancellation in time"] * 2
    assert out[-1] == ev.JobTerminated(J.CANCELED)


def test_slots_that_do_not_come_fail_or_restart_the_waiting_job():
    m = machine(RestartStrategy())
    m.handle(ev.JobStarted())
    out = m.handle(ev.SlotsUnavailable(0, "needs 2 slots, 0 available"))
    assert out[0] == ev.RecordFailure("needs 2 slots, 0 available", "NoResourceAvailableException", None)
    assert out[-1] == ev.JobTerminated(J.FAILED)
    m = machine(FixedDelay(1, 2.0))
    m.handle(ev.JobStarted())
    out = m.handle(ev.SlotsUnavailable(0, "no slots"))
    assert m.status == J.RESTARTING and out[-2:] == [ev.FreeSlots(), ev.ScheduleRestart(0, 2.0)]


def test_reports_of_an_earlier_round_and_out_of_order_reports_change_nothing():
    m = running()
    old = attempts(m)[0].attempt_id
    m.handle(ev.TaskReported(old, E.FAILED, "x"))
    confirm_cancels(m)
    m.handle(ev.RestartDelayPassed(0))
    assert m.handle(ev.TaskReported(old, E.RUNNING)) == [] and m.handle(ev.RestartDelayPassed(0)) == []
    m.handle(ev.SlotsGranted(1, slots("tm-a", "tm-b")))
    current = attempts(m)[0]
    m.handle(ev.TaskReported(current.attempt_id, E.RUNNING))
    assert m.handle(ev.TaskReported(current.attempt_id, E.DEPLOYING)) == [] and current.state == E.RUNNING


def test_a_restart_timer_of_an_earlier_round_does_not_end_a_later_restart_delay():
    m = running()
    m.handle(ev.TaskReported(attempts(m)[0].attempt_id, E.FAILED, "first"))
    confirm_cancels(m)
    m.handle(ev.RestartDelayPassed(0))
    m.handle(ev.SlotsGranted(1, slots("tm-a", "tm-b")))
    for ex in attempts(m):
        m.handle(ev.TaskReported(ex.attempt_id, E.RUNNING))
    m.handle(ev.TaskReported(attempts(m)[0].attempt_id, E.FAILED, "second"))
    assert confirm_cancels(m)[-1] == ev.ScheduleRestart(1, 1.5)
    assert m.handle(ev.RestartDelayPassed(0)) == [], "round 0's timer, firing late, cuts round 1's delay short"
    assert m.status == J.RESTARTING and m.restarts == 1
    assert m.handle(ev.RestartDelayPassed(1))[-1] == ev.RequestSlots(2, 2)


def test_a_task_cancelled_without_a_request_is_a_failure():
    m = running()
    ex = attempts(m)[1]
    out = m.handle(ev.TaskReported(ex.attempt_id, E.CANCELED))
    assert m.status == J.RESTARTING and "without a request" in out[1].error


def test_too_many_failed_checkpoints_fail_over_only_a_running_job():
    m = running()
    out = m.handle(ev.CheckpointsFailing("exceeded checkpoint tolerable failure threshold"))
    assert out[0] == ev.RecordFailure("exceeded checkpoint tolerable failure threshold", "CheckpointException", None)
    assert m.status == J.RESTARTING
    assert m.handle(ev.CheckpointsFailing("again")) == []


def test_stop_with_savepoint_pauses_checkpoints_and_resumes_them_if_the_savepoint_fails():
    m = running()
    assert m.handle(ev.StopRequested(7)) == [ev.PauseCheckpointing()]
    assert m.handle(ev.StopRequested(8)) == []  # one stop at a time
    assert m.handle(ev.CheckpointFailed(7)) == [ev.StartCheckpointing()]
    m.handle(ev.StopRequested(9))
    assert m.handle(ev.CheckpointCompleted(9)) == [] and m.stop_savepoint is None


def test_a_task_manager_lost_during_a_stop_savepoint_fails_over_and_the_aborted_savepoint_changes_nothing():
    m = running()
    m.handle(ev.StopRequested(4))
    out = m.handle(ev.TaskManagerLost(TaskManagerId("tm-b"), "lost"))
    assert ev.StopCheckpointing("job failover: lost") in out and m.stop_savepoint is None
    assert m.handle(ev.CheckpointFailed(4)) == [] and m.status == J.RESTARTING


@pytest.mark.parametrize("state", [J.FINISHED, J.CANCELED, J.FAILED])
def test_a_terminal_job_ignores_everything(state):
    m = running(RestartStrategy())
    if state == J.FINISHED:
        for ex in attempts(m):
            m.handle(ev.TaskReported(ex.attempt_id, E.FINISHED))
    elif state == J.CANCELED:
        m.handle(ev.CancelRequested())
        confirm_cancels(m)
    else:
        m.handle(ev.TaskReported(attempts(m)[0].attempt_id, E.FAILED, "x"))
        confirm_cancels(m)
    assert m.status == state
    for event in (ev.CancelRequested(), ev.TaskManagerLost(TaskManagerId("tm-a"), "x"), ev.CheckpointsFailing("x"),
                  ev.RestartDelayPassed(0), ev.CancelTimedOut(0), ev.SlotsUnavailable(0, "x")):
        assert m.handle(event) == []


def test_a_job_suspended_by_a_lost_leadership_stops_acting_even_mid_restart():
    m = running()
    m.handle(ev.TaskReported(attempts(m)[0].attempt_id, E.FAILED, "x"))
    out = m.handle(ev.Suspended("leadership lost"))
    assert out == [ev.JobStatusChanged(J.RESTARTING, J.SUSPENDED, "leadership lost"), ev.JobSuspended()], \
        "no StopCheckpointing: aborting would delete files that are now the new leader's to restore or sweep"
    for event in (ev.RestartDelayPassed(0), ev.CancelRequested(), ev.CancelTimedOut(0),
                  ev.TaskReported(attempts(m)[1].attempt_id, E.CANCELED), ev.Suspended("again")):
        assert m.handle(event) == []
    assert m.status == J.SUSPENDED


def test_with_no_checkpoint_left_to_restore_the_job_fails_whatever_restarts_remain():
    m = running(FixedDelay(2**31 - 1, 0.2))
    out = m.handle(ev.Unrecoverable("cannot restore checkpoint 7 (file:///ck/chk-7) in 2 attempts: missing"))
    assert kinds(out)[:3] == ["RecordFailure", "StopCheckpointing", "JobStatusChanged"] and m.status == J.FAILING
    assert "CancelTask" in kinds(out) and "JobRestarting" not in kinds(out)
    out = confirm_cancels(m)
    assert out[-1] == ev.JobTerminated(J.FAILED) and "chk-7" in m.cause


def test_a_job_waiting_out_its_restart_delay_fails_at_once_when_nothing_is_left_to_restore():
    m = running(FixedDelay(5, 0.2))
    m.handle(ev.TaskReported(attempts(m)[0].attempt_id, E.FAILED, "RestoreFailed: checkpoint 7"))
    confirm_cancels(m)
    assert m.status == J.RESTARTING
    out = m.handle(ev.Unrecoverable("no older retained checkpoint"))
    assert out[-1] == ev.JobTerminated(J.FAILED) and m.handle(ev.RestartDelayPassed(0)) == []
