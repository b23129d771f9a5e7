"""The fault schedule of a chaos run: which fault, when, for how long. Pure and seeded: the same spec and
seed give the same schedule, so a failing run can be replayed.

Two kinds of faults share one timeline:

- TaskManager kills (SIGKILL) come at random gaps drawn uniformly from ``tm_gap`` (0–6 s), all the way
  through, except from ``quiet_before_leader_s`` before a leader fault until ``quiet_after_leader_s``
  after it: the time from a leader fault to RUNNING then measures the leader change alone, not a
  TaskManager loss on top of it nor tasks waiting for a just-started replacement's Spark JVM.
- Major faults (leader kill, leader pause, ZooKeeper restart, checkpoint storage outage, TaskManager
  pause) each get a slot of their own, in an order drawn from the seed, so one has recovered before the
  next begins. A slot is the run's duration divided evenly; the fault starts at a random point of its
  slot's first half. With ``pause_range`` each leader pause lasts a time drawn from it (gray failures:
  8-15 s, far past the lease); the injector stops the leader while a checkpoint is in progress.

Gray failures (``timed_kills``): each TaskManager kill is drawn among a plain kill and kills timed to a
checkpoint's phases: right after its trigger, during its acknowledgements, right after it completed
(while the sinks commit).
"""
from __future__ import annotations

import enum
import random
from dataclasses import dataclass


class FaultKind(str, enum.Enum):
    TASKMANAGER_KILL = "taskmanager-kill"  # SIGKILL one TaskManager (the harness starts a replacement)
    LEADER_KILL = "leader-kill"  # SIGKILL the leading JobManager (the harness starts another standby)
    LEADER_PAUSE = "leader-pause"  # SIGSTOP the leader for ``duration``, then SIGCONT: split brain
    ZOOKEEPER_RESTART = "zookeeper-restart"  # the ZooKeeper server killed, started again after ``duration``
    STORAGE_OUTAGE = "storage-outage"  # the checkpoint directory replaced by a file for ``duration``
    TASKMANAGER_PAUSE = "taskmanager-pause"  # SIGSTOP a TaskManager past the heartbeat timeout, then SIGCONT
    KILL_AFTER_TRIGGER = "kill-after-trigger"  # SIGKILL a TaskManager as soon as a checkpoint is triggered
    KILL_DURING_ACK = "kill-during-ack"  # ... while a checkpoint's acknowledgements come in
    KILL_DURING_COMMIT = "kill-during-commit"  # ... as soon as a checkpoint completed: its sinks commit

    @property
    def leader_fault(self) -> bool:
        return self in (FaultKind.LEADER_KILL, FaultKind.LEADER_PAUSE)

    @property
    def quiet_around(self) -> bool:
        """TaskManager kills keep away from it: its recovery is measured alone."""
        return self.leader_fault or self is FaultKind.TASKMANAGER_PAUSE

    @property
    def kill(self) -> bool:
        return self in KILLS


KILLS = (FaultKind.TASKMANAGER_KILL, FaultKind.KILL_AFTER_TRIGGER, FaultKind.KILL_DURING_ACK,
         FaultKind.KILL_DURING_COMMIT)


@dataclass(frozen=True)
class Fault:
    at: float  # seconds from the start of the fault phase
    kind: FaultKind
    duration: float = 0.0  # how long a pause, restart or outage lasts; 0 for kills


@dataclass(frozen=True)
class ScheduleSpec:
    duration: float  # seconds of the fault phase
    leader_kills: int = 2
    leader_pauses: int = 1
    zookeeper_restarts: int = 0
    storage_outages: int = 1
    taskmanager_pauses: int = 0
    timed_kills: bool = False  # TaskManager kills timed to a checkpoint's trigger, acknowledgements or commit too
    tm_gap: tuple[float, float] = (0.0, 6.0)
    pause_s: float = 6.0  # long enough for a standby to take the lease (lease 2 s)
    pause_range: tuple[float, float] | None = None  # each leader pause drawn from it instead (gray: 8-15 s)
    tm_pause_s: float = 6.0  # past the chaos cluster's heartbeat timeout (3 s)
    zookeeper_down_s: float = 3.0
    storage_down_s: float = 6.0
    quiet_after_leader_s: float = 10.0
    quiet_before_leader_s: float = 8.0  # a replacement TaskManager's Spark JVM comes up meanwhile
    min_slot_s: float = 20.0  # a major fault and its recovery fit in this

    def majors(self) -> list[tuple[FaultKind, float]]:
        """Each major fault with its longest duration."""
        pause = self.pause_range[1] if self.pause_range else self.pause_s
        return ([(FaultKind.LEADER_KILL, 0.0)] * self.leader_kills
                + [(FaultKind.LEADER_PAUSE, pause)] * self.leader_pauses
                + [(FaultKind.ZOOKEEPER_RESTART, self.zookeeper_down_s)] * self.zookeeper_restarts
                + [(FaultKind.STORAGE_OUTAGE, self.storage_down_s)] * self.storage_outages
                + [(FaultKind.TASKMANAGER_PAUSE, self.tm_pause_s)] * self.taskmanager_pauses)


def build_schedule(spec: ScheduleSpec, seed: int) -> list[Fault]:
    """Every fault of the run in time order; ValueError when the majors do not fit the duration."""
    lo, hi = spec.tm_gap
    if not 0 <= lo <= hi or hi <= 0:
        raise ValueError(f"tm_gap must be 0 <= low <= high with high > 0, got {spec.tm_gap}")
    rng = random.Random(seed)
    majors = spec.majors()
    rng.shuffle(majors)
    slot = spec.duration / max(1, len(majors))
    if majors and slot < max(spec.min_slot_s, *(d + spec.quiet_after_leader_s for _, d in majors)):
        raise ValueError(f"{len(majors)} major faults need at least {spec.min_slot_s:g} s each; "
                         f"{spec.duration:g} s gives {slot:.1f} s")
    faults = [Fault(round(i * slot + rng.uniform(0, slot / 2), 3), kind, _drawn(spec, kind, duration, rng))
              for i, (kind, duration) in enumerate(majors)]
    quiet = [(f.at - spec.quiet_before_leader_s, f.at + f.duration + spec.quiet_after_leader_s)
             for f in faults if f.kind.quiet_around]
    t = rng.uniform(lo, hi)
    while t < spec.duration:
        if not any(start <= t < end for start, end in quiet):
            faults.append(Fault(round(t, 3), rng.choice(KILLS) if spec.timed_kills else FaultKind.TASKMANAGER_KILL))
        t += rng.uniform(lo, hi)
    return sorted(faults, key=lambda f: (f.at, f.kind.value))


def _drawn(spec: ScheduleSpec, kind: FaultKind, longest: float, rng: random.Random) -> float:
    if kind is FaultKind.LEADER_PAUSE and spec.pause_range:
        return round(rng.uniform(*spec.pause_range), 1)
    return longest


def count_by_kind(faults: list[Fault]) -> dict[FaultKind, int]:
    """How many faults of each kind, every kind listed (0 for those absent)."""
    return {kind: sum(1 for f in faults if f.kind is kind) for kind in FaultKind}
