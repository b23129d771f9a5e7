"""Job failover as a pure state machine: events in, a list of actions out, no I/O inside.

The JobMaster turns what happens (a task's report, a lost TaskManager, a timer firing, a user's
cancel) into an event for :meth:`JobFailover.handle` and only executes the actions that come back:
send a message through a gateway, free slots, start a timer, publish an event. Nothing here reads a
clock or touches the loop, so every transition is tested without processes
(tests/unit/jobmanager/test_failover.py). Job states and their legal moves are runtime.states'::

    INITIALIZING --JobStarted--> CREATED --SlotsGranted--> RUNNING --every task FINISHED--> FINISHED
                                   ^  |                      |
                                   |  | SlotsUnavailable     | TaskReported(FAILED), TaskManagerLost,
                                   |  v                      v CheckpointsFailing
           RestartDelayPassed  RESTARTING <--strategy: restart--+--strategy: give up--> FAILING
           (attempts stopped)                                                     (attempts stopped)
                                                                                          v
    CancelRequested in any live state --> CANCELLING --attempts stopped--> CANCELED     FAILED

"Attempts stopped": every attempt of the round confirmed its end (CANCELED, FAILED, FINISHED), or
CancelTimedOut came first and the rest count as CANCELED. Transition table:

    status        event                         next status, actions
    INITIALIZING  JobStarted                    CREATED; RequestSlots
    CREATED       SlotsGranted                  RUNNING; AssignTasks, DeployTasks, StartCheckpointing
    CREATED       SlotsUnavailable              failover (below)
    RUNNING       TaskReported(FINISHED, last)  FINISHED; JobTerminated
    RUNNING       TaskReported(FAILED) / TaskManagerLost / CheckpointsFailing
                                                failover: StopCheckpointing, RecordFailure, then
                                                RESTARTING (JobRestarting) or FAILING; CancelTask each
    CREATED, RUNNING, RESTARTING  Unrecoverable (no checkpoint left to restore)
                                                FAILING, whatever the restart strategy; RecordFailure,
                                                StopCheckpointing, CancelTask each; then FAILED
    RESTARTING    attempts stopped              FreeSlots, ScheduleRestart
    RESTARTING    RestartDelayPassed            CREATED (new attempts); RequestSlots
    FAILING       attempts stopped              FAILED; JobTerminated
    live          CancelRequested               CANCELLING; StopCheckpointing, CancelSlotRequest, CancelTask
    live          Suspended (leadership lost)   SUSPENDED; JobSuspended (checkpointing stops without a
                                                write: what is in flight is the new leader's); then every
                                                event is ignored: the new leader resumes the job
    CANCELLING    attempts stopped              CANCELED; JobTerminated
    RUNNING       StopRequested                 PauseCheckpointing (stop-with-savepoint in flight)
    RUNNING       CheckpointFailed(that one)    StartCheckpointing (the job keeps running)

Reports about attempts of an earlier round, timers of an earlier round and grants that come too late
are ignored (a late grant is given back).
"""
from __future__ import annotations

from runtime.errors import last_line
from runtime.jobmanager.execution_graph import Execution, ExecutionGraph
from runtime.jobmanager.failover_events import (Action, AssignTasks, CancelRequested, CancelSlotRequest, CancelTask,
                                                CancelTimedOut, CheckpointCompleted, CheckpointFailed,
                                                CheckpointsFailing, DeployTasks, Event, FreeSlots, JobRestarting,
                                                JobStarted, JobStatusChanged, JobSuspended, JobTerminated,
                                                PauseCheckpointing,
                                                RecordFailure, RequestSlots, RestartDelayPassed, ScheduleCancelTimeout,
                                                ScheduleRestart, SlotsGranted, SlotsUnavailable, StartCheckpointing,
                                                StopCheckpointing, StopRequested, Suspended, TaskManagerLost,
                                                TaskReported, TaskStateChanged, Unrecoverable)
from runtime.jobmanager.restart import RestartStrategy
from runtime.states import EXECUTION_TRANSITIONS, ExecutionState, JobStatus, advance

CANCEL_WAIT_S = 10.0
_E, _J = ExecutionState, JobStatus
_AFTER_STOP = {_J.FAILING: _J.FAILED, _J.CANCELLING: _J.CANCELED}


class JobFailover:
    """The decisions of one job's JobMaster: its status, its attempts' states and its restarts.

    Owns the job's ExecutionGraph (pure data) and restart strategy; :meth:`handle` is the one entry
    point. Runs wherever its caller runs (the JobManager's loop), never blocks."""

    def __init__(self, eg: ExecutionGraph, strategy: RestartStrategy):
        self.eg = eg
        self.strategy = strategy
        self.status = JobStatus.INITIALIZING
        self.restarts = 0
        self.cause: str | None = None
        self.stop_savepoint: int | None = None  # a stop-with-savepoint in flight
        self._stopping = False  # waiting for every attempt of the round to end
        self._restart_delay = 0.0

    @property
    def round(self) -> int:
        """Which restart this is (0 for the first run); timers and slot requests carry it."""
        return self.eg.attempt

    def handle(self, event: Event, now: float = 0.0) -> list[Action]:
        """Apply ``event`` and return what the JobMaster must do, in order. ``now`` (monotonic
        seconds) is what the restart strategy counts failures against."""
        out: list[Action] = []
        if self.status == _J.SUSPENDED:
            return out  # another JobManager leads now: nothing here acts for the job any more
        if isinstance(event, JobStarted):
            self._set_status(_J.CREATED, out)
            out.append(RequestSlots(self.round, self.eg.max_parallelism))
        elif isinstance(event, SlotsGranted):
            self._slots_granted(event, out)
        elif isinstance(event, SlotsUnavailable):
            if self.status == _J.CREATED and event.round == self.round:
                out.append(RecordFailure(event.reason, "NoResourceAvailableException", None))
                self._failover(event.reason, now, out)
        elif isinstance(event, TaskReported):
            self._task_reported(event, now, out)
        elif isinstance(event, TaskManagerLost):
            for _, ex in list(self.eg.executions()):
                if ex.tm_id == event.tm_id:
                    self._task_failed(ex, event.reason, now, out)
        elif isinstance(event, CheckpointsFailing):
            if self.status == _J.RUNNING:
                out.append(RecordFailure(event.cause, "CheckpointException", None))
                self._failover(event.cause, now, out)
        elif isinstance(event, Unrecoverable):
            if self.status in (_J.CREATED, _J.RUNNING, _J.RESTARTING):
                out.append(RecordFailure(event.cause, "RestoreFailed", None))
                out.append(StopCheckpointing(f"job failed: {last_line(event.cause)}"))
                self._set_status(_J.FAILING, out, event.cause)
                self._stop_round(out)
        else:
            self._control(event, out)
        return out

    # -- events that steer the job rather than report on it ------------------------------------
    def _control(self, event: Event, out: list[Action]) -> None:
        if isinstance(event, CancelRequested):
            self._cancel(out)
        elif isinstance(event, Suspended):
            if not self.status.is_globally_terminal:
                self._set_status(_J.SUSPENDED, out, event.reason)
                out.append(JobSuspended())
        elif isinstance(event, RestartDelayPassed):
            if self.status == _J.RESTARTING and event.round == self.round and not self._stopping:
                self.restarts += 1
                self.eg.attempt += 1
                self.eg.reset_attempts()
                self._set_status(_J.CREATED, out)
                out.append(RequestSlots(self.round, self.eg.max_parallelism))
        elif isinstance(event, CancelTimedOut):
            if self._stopping and event.round == self.round:
                for _, ex in self.eg.executions():
                    self._set_task(ex, _E.CANCELED, "did not confirm cancellation in time", out)
                self._check_stopped(out)
        elif isinstance(event, StopRequested):
            if self.status == _J.RUNNING and self.stop_savepoint is None:
                self.stop_savepoint = event.checkpoint_id
                out.append(PauseCheckpointing())
        elif isinstance(event, CheckpointFailed):
            if event.checkpoint_id == self.stop_savepoint:
                self.stop_savepoint = None
                if self.status == _J.RUNNING:
                    out.append(StartCheckpointing())
        elif isinstance(event, CheckpointCompleted) and event.checkpoint_id == self.stop_savepoint:
            self.stop_savepoint = None  # the tasks end after it; the job FINISHES when the last one does

    def _slots_granted(self, event: SlotsGranted, out: list[Action]) -> None:
        if self.status != _J.CREATED or event.round != self.round:
            out.append(FreeSlots())  # cancelled (or failed) while waiting: give them back
            return
        slots = list(event.slots)
        for i, slot in enumerate(slots):
            out.append(AssignTasks(slot.allocation_id, tuple(v.name for v in self.eg.vertices if i < v.parallelism)))
        for _, ex in self.eg.executions():
            ex.slot = slots[ex.subtask_index]
            self._set_task(ex, _E.SCHEDULED, None, out)
        self._set_status(_J.RUNNING, out)
        for _, ex in self.eg.executions():
            self._set_task(ex, _E.DEPLOYING, None, out)
        out.append(DeployTasks(tuple(ex.attempt_id for _, ex in self.eg.executions())))
        out.append(StartCheckpointing())

    # -- task reports ------------------------------------------------------------------------
    def _task_reported(self, event: TaskReported, now: float, out: list[Action]) -> None:
        _, ex = self.eg.find(event.attempt_id)
        if ex is None or ex.state.is_terminal:
            return  # an attempt of an earlier round, or one whose end is already known
        target = event.state
        if ex.state == _E.CANCELING:
            if target.is_terminal:  # ending in any way while being cancelled ends it all the same
                self._set_task(ex, _E.CANCELED, event.error if target != _E.CANCELED else None, out)
                self._check_stopped(out)
            return  # progress of an attempt already asked to stop
        if target == _E.FAILED:
            self._task_failed(ex, event.error or "task failed without a message", now, out)
        elif target == _E.CANCELED:  # nobody asked: the TaskManager gave the task up
            self._task_failed(ex, event.error or f"task was cancelled on TaskManager {ex.tm_id} without a request",
                              now, out)
        elif target in EXECUTION_TRANSITIONS[ex.state]:
            self._set_task(ex, target, None, out)
            if target == _E.FINISHED and self.status == _J.RUNNING and self.eg.all_in(_E.FINISHED):
                self._terminate(_J.FINISHED, None, out)

    def _task_failed(self, ex: Execution, error: str, now: float, out: list[Action]) -> None:
        if ex.state.is_terminal:
            return
        ex.error = error
        self._set_task(ex, _E.FAILED, error, out)
        if self.status in (_J.CREATED, _J.RUNNING):
            out.append(RecordFailure(error, exception_name(error), ex.attempt_id))
            self._failover(error, now, out)
        else:
            self._check_stopped(out)

    # -- failover, cancel and the end of a round ---------------------------------------------------
    def _failover(self, cause: str, now: float, out: list[Action]) -> None:
        """Decide at once (so that a second failure of the same round joins this one), then stop the round."""
        if self.status not in (_J.CREATED, _J.RUNNING):
            return
        out.append(StopCheckpointing(f"job failover: {last_line(cause)}"))
        self.stop_savepoint = None
        decision = self.strategy.on_failure(now)
        if decision.restart:
            self._set_status(_J.RESTARTING, out, cause)
            self._restart_delay = decision.delay_s
            out.append(JobRestarting(self.round + 1, cause, decision.delay_s))
        else:
            self._set_status(_J.FAILING, out, cause)
        self._stop_round(out)

    def _cancel(self, out: list[Action]) -> None:
        if self.status.is_globally_terminal or self.status == _J.CANCELLING:
            return
        was_waiting_for_slots = self.status == _J.CREATED
        self._set_status(_J.CANCELLING, out)
        out.append(StopCheckpointing("job cancelled"))
        if was_waiting_for_slots:
            out.append(CancelSlotRequest())
        self._stop_round(out)

    def _stop_round(self, out: list[Action]) -> None:
        """Ask every live attempt to cancel; attempts that never reached a TaskManager end here."""
        self._stopping = True
        asked = False
        for _, ex in self.eg.executions():
            if ex.state.is_terminal or ex.state == _E.CANCELING:
                asked = asked or ex.state == _E.CANCELING
            elif ex.slot is None or ex.state in (_E.CREATED, _E.SCHEDULED):
                self._set_task(ex, _E.CANCELED, None, out)
            else:
                self._set_task(ex, _E.CANCELING, None, out)
                out.append(CancelTask(ex.attempt_id))
                asked = True
        if asked:
            out.append(ScheduleCancelTimeout(self.round, CANCEL_WAIT_S))
        self._check_stopped(out)

    def _check_stopped(self, out: list[Action]) -> None:
        """Once every attempt of the round has ended, do what the round was stopped for."""
        if not self._stopping or not all(ex.state.is_terminal for _, ex in self.eg.executions()):
            return
        self._stopping = False
        if self.status == _J.RESTARTING:
            out.append(FreeSlots())
            out.append(ScheduleRestart(self.round, self._restart_delay))
        elif self.status in _AFTER_STOP:
            self._terminate(_AFTER_STOP[self.status], self.cause if self.status == _J.FAILING else None, out)

    def _terminate(self, status: JobStatus, cause: str | None, out: list[Action]) -> None:
        self._set_status(status, out, cause)
        out.append(JobTerminated(status))

    # -- bookkeeping -----------------------------------------------------------------------------
    def _set_status(self, status: JobStatus, out: list[Action], cause: str | None = None) -> None:
        previous = self.status
        if previous == status:
            return
        self.status = advance(previous, status)
        if cause is not None:
            self.cause = cause
        out.append(JobStatusChanged(previous, status, cause))

    def _set_task(self, ex: Execution, state: ExecutionState, error: str | None, out: list[Action]) -> None:
        if ex.state.is_terminal and state != ex.state:
            return
        if ex.transition(state):
            out.append(TaskStateChanged(ex.attempt_id, state, error))


def exception_name(error: str) -> str:
    """The exception class from the last line of a Python traceback, for Flink's ``exceptionName``."""
    head = last_line(error).split(":", 1)[0].strip()
    return head if head.replace(".", "").replace("_", "").isalnum() and " " not in head else "TaskFailure"
