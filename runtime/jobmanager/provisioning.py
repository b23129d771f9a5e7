"""When to start and stop TaskManagers: the resource provider's decisions as a pure state machine.

:class:`Provisioner` takes what the ResourceManager observes (slots asked for and not yet given,
TaskManagers registered, busy or idle, lost, processes that exited, the clock) as events and answers
with actions (start a TaskManager, stop one, tell the event stream why). It does no I/O and reads no
clock: runtime.jobmanager.resource_provider carries the actions out, so every rule here is tested
without a process.

The rules, in the spirit of Flink's active resource managers:

- Demand: slots that pending requests need beyond the free slots of registered TaskManagers and
  the slots of TaskManagers already starting are provided by starting ``ceil(missing / slots)``
  TaskManagers, never more than ``max_taskmanagers`` in the cluster; what is beyond is refused once
  (until the demand changes), naming what the cluster can give.
- Replacement: a TaskManager lost while some of its slots were in use is replaced at once: its jobs
  restart and will ask for those slots again. One this provider started whose process exits is
  declared lost at once, without waiting for heartbeats to time out.
- Standby: ``standby`` TaskManagers are kept idle beyond the demand (their Spark already started), so
  that a job restarting after a loss does not wait for a new JVM.
- Idle: a TaskManager this provider started whose slots have all been free for ``idle_timeout`` is
  stopped, unless the standby or waiting requests still need it. TaskManagers it did not start (by
  hand, or the cluster's initial ones) count as capacity but are never stopped.
- A started TaskManager that exits or does not register within ``start_timeout`` is given up; starts
  after a failed one back off (1, 2, 4, ... up to 60 s) so that a broken set-up does not spin.
- Departure: a TaskManager that deregisters (it was stopped on purpose) is not lost and not replaced; the
  jobs on it ask for slots again, which the demand rule serves.
- Stopping: once the cluster stops, nothing is started any more, whatever leaves or waits.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

# -- events in --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Observed:
    """The ResourceManager's table now: slots waiting requests need in total, and every registered
    TaskManager's (slots, slots in use). Sent on every change and on a timer; the clock for timeouts."""
    now: float
    pending_slots: int
    registered: dict[str, tuple[int, int]]


@dataclass(frozen=True)
class ProcessExited:
    """A TaskManager process this provider started has ended (by itself or because it was stopped)."""
    tm_id: str
    exit_code: int | None
    now: float


@dataclass(frozen=True)
class Departed:
    """A TaskManager deregistered: it leaves on purpose (stopped), which is not a loss."""
    tm_id: str
    now: float


@dataclass(frozen=True)
class ClusterStopping:
    """The JobManager is stopping: from now on no TaskManager is started."""
    now: float


Event = Observed | ProcessExited | Departed | ClusterStopping

# -- actions out ------------------------------------------------------------------------------


@dataclass(frozen=True)
class StartTaskManager:
    tm_id: str
    reason: str


@dataclass(frozen=True)
class StopTaskManager:
    """End its process; with ``release`` first take it out of the ResourceManager's table (it is idle:
    no job loses anything). A lost one has left the table already."""
    tm_id: str
    reason: str
    release: bool = True


@dataclass(frozen=True)
class ReleaseTaskManager:
    """Its process is gone: declare it lost now rather than after the heartbeat timeouts."""
    tm_id: str
    reason: str


@dataclass(frozen=True)
class Announce:
    """A decision for the event stream: requested, registered, idle, refused, given-up."""
    decision: str
    tm_id: str | None
    reason: str


Action = StartTaskManager | StopTaskManager | ReleaseTaskManager | Announce


@dataclass(frozen=True)
class ProvisioningPolicy:
    slots_per_taskmanager: int
    max_taskmanagers: int
    idle_timeout: float
    standby: int = 0
    start_timeout: float = 120.0
    max_backoff: float = 60.0


@dataclass
class _TaskManager:
    slots: int
    busy: int = 0
    idle_since: float | None = None
    own: bool = False        # started by this provider: it may stop it
    starting: bool = False   # started, not registered yet
    started_at: float = 0.0


@dataclass
class Provisioner:
    """The provider's view of the cluster and its rules; :meth:`handle` is the one entry point."""
    policy: ProvisioningPolicy
    new_id: Callable[[], str]  # the id a new TaskManager will register with
    taskmanagers: dict[str, _TaskManager] = field(default_factory=dict)
    pending_slots: int = 0
    _refused_at: int | None = None  # the demand last refused, so a refusal is said once
    _failed_starts: int = 0
    _next_start_at: float = 0.0
    stopping: bool = False

    def handle(self, event: Event) -> list[Action]:
        """Apply one event and return what to do now, in order."""
        if isinstance(event, ClusterStopping):
            self.stopping = True
            return []
        if isinstance(event, Departed):
            self.taskmanagers.pop(event.tm_id, None)  # gone on purpose: neither lost nor replaced
            actions: list[Action] = []
        elif isinstance(event, ProcessExited):
            actions = self._exited(event)
        else:
            self.pending_slots = event.pending_slots
            actions = self._observe(event)
        return actions if self.stopping else actions + self._evaluate(event.now)

    # -- facts --------------------------------------------------------------------------------
    def _observe(self, e: Observed) -> list[Action]:
        actions: list[Action] = []
        for tm_id, tm in list(self.taskmanagers.items()):
            if not tm.starting and tm_id not in e.registered:
                actions += self._lost(tm_id, tm, e.now)
        for tm_id, (slots, busy) in e.registered.items():
            tm = self.taskmanagers.get(tm_id)
            if tm is None:
                tm = self.taskmanagers[tm_id] = _TaskManager(slots)  # registered by someone else
            elif tm.starting:  # its idle time counts from now; "idle" is said once it has worked
                tm.starting, tm.idle_since, self._failed_starts = False, e.now, 0
                actions.append(Announce("registered", tm_id, f"started by the local provider, {slots} slots"))
            tm.slots = slots
            actions += self._usage(tm_id, tm, busy, e.now)
        return actions

    def _usage(self, tm_id: str, tm: _TaskManager, busy: int, now: float) -> list[Action]:
        """Track when a TaskManager's slots all became free; say so for the ones this provider may stop."""
        tm.busy = busy
        if busy:
            tm.idle_since = None
            return []
        if tm.idle_since is not None:
            return []
        tm.idle_since = now
        if not tm.own:
            return []
        return [Announce("idle", tm_id, f"all {tm.slots} slots free; stopped after "
                                        f"{self.policy.idle_timeout:g} s unless a job needs it")]

    def _lost(self, tm_id: str, tm: _TaskManager, now: float) -> list[Action]:
        del self.taskmanagers[tm_id]
        actions: list[Action] = [StopTaskManager(tm_id, "lost", release=False)] if tm.own else []  # hung: end it
        if tm.busy:
            actions += self._start(now, f"replaces lost TaskManager {tm_id}, whose {tm.busy} slots were in use")
        return actions

    def _exited(self, e: ProcessExited) -> list[Action]:
        tm = self.taskmanagers.get(e.tm_id)
        if tm is None:
            return []  # stopped here, or already lost
        if not tm.starting:
            return [ReleaseTaskManager(e.tm_id, f"TaskManager {e.tm_id} lost: its process exited "
                                                f"with code {e.exit_code}")]
        del self.taskmanagers[e.tm_id]
        return self._give_up(e.tm_id, e.now, f"exited with code {e.exit_code} before registering")

    # -- rules --------------------------------------------------------------------------------
    def _evaluate(self, now: float) -> list[Action]:
        return self._time_out_starts(now) + self._meet_demand(now) + self._keep_standby(now) + self._stop_idle(now)

    def _time_out_starts(self, now: float) -> list[Action]:
        actions: list[Action] = []
        for tm_id, tm in list(self.taskmanagers.items()):
            if tm.starting and now - tm.started_at > self.policy.start_timeout:
                del self.taskmanagers[tm_id]
                reason = f"did not register within {self.policy.start_timeout:g} s"
                actions += [StopTaskManager(tm_id, reason), *self._give_up(tm_id, now, reason)]
        return actions

    def _give_up(self, tm_id: str, now: float, reason: str) -> list[Action]:
        self._failed_starts += 1
        self._next_start_at = now + min(self.policy.max_backoff, 2.0 ** (self._failed_starts - 1))
        return [Announce("given-up", tm_id, reason)]

    def _meet_demand(self, now: float) -> list[Action]:
        missing = self.pending_slots - self._free_capacity()
        if missing <= 0:
            self._refused_at = None
            return []
        per_tm = self.policy.slots_per_taskmanager
        wanted = math.ceil(missing / per_tm)
        room = self.policy.max_taskmanagers - len(self.taskmanagers)
        actions: list[Action] = []
        for _ in range(min(wanted, room)):
            actions += self._start(now, f"waiting requests need {missing} more slots")
        if wanted > room and self._refused_at != self.pending_slots:
            self._refused_at = self.pending_slots
            actions.append(Announce("refused", None, self.refusal(self.pending_slots)))
        return actions

    def _keep_standby(self, now: float) -> list[Action]:
        per_tm = self.policy.slots_per_taskmanager
        spare_tms = (self._free_capacity() - self.pending_slots) // per_tm
        missing = min(self.policy.standby - spare_tms, self.policy.max_taskmanagers - len(self.taskmanagers))
        actions: list[Action] = []
        for _ in range(max(0, missing)):
            actions += self._start(now, f"keeps {self.policy.standby} standby TaskManager(s) ready")
        return actions

    def _stop_idle(self, now: float) -> list[Action]:
        if self.pending_slots:
            return []
        idle = sorted((tm.idle_since, tm_id) for tm_id, tm in self.taskmanagers.items()
                      if not tm.starting and tm.busy == 0 and tm.idle_since is not None)
        keep = self.policy.standby
        actions: list[Action] = []
        for since, tm_id in reversed(idle):  # the longest idle go first; the newest stay as standby
            tm = self.taskmanagers[tm_id]
            if keep > 0:
                keep -= 1
                continue
            if tm.own and now - since >= self.policy.idle_timeout:
                del self.taskmanagers[tm_id]
                actions.append(StopTaskManager(tm_id, f"idle for {now - since:.0f} s "
                                                      f"(resourcemanager.taskmanager-timeout "
                                                      f"{self.policy.idle_timeout:g} s)"))
        return actions

    def _start(self, now: float, reason: str) -> list[Action]:
        if self.stopping or now < self._next_start_at or len(self.taskmanagers) >= self.policy.max_taskmanagers:
            return []  # stopping, backing off after a failed start (the next evaluation tries again), or full
        tm_id = self.new_id()
        self.taskmanagers[tm_id] = _TaskManager(self.policy.slots_per_taskmanager, own=True, starting=True,
                                                started_at=now)
        return [Announce("requested", tm_id, reason), StartTaskManager(tm_id, reason)]

    # -- views --------------------------------------------------------------------------------
    def _free_capacity(self) -> int:
        """Free slots of registered TaskManagers plus every slot of the ones starting."""
        return sum(tm.slots - tm.busy for tm in self.taskmanagers.values())

    def can_give(self) -> int:
        """The most slots the cluster can have: what is there now plus what may still be started."""
        there = sum(tm.slots for tm in self.taskmanagers.values())
        room = max(0, self.policy.max_taskmanagers - len(self.taskmanagers))
        return there + room * self.policy.slots_per_taskmanager

    def refusal(self, needed: int) -> str:
        p = self.policy
        return (f"{needed} slots are needed but the cluster can give at most {self.can_give()} "
                f"(resourcemanager.local.max-taskmanagers {p.max_taskmanagers} x "
                f"taskmanager.numberOfTaskSlots {p.slots_per_taskmanager}, "
                f"{len(self.taskmanagers)} TaskManagers now)")
