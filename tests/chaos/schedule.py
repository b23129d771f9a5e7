"""The fault schedule of a chaos run: which fault, when, for how long. Pure and seeded: the same spec and
seed give the same schedule, so a failing run can be replayed.

Two kinds of faults share one timeline:

- TaskManager kills (SIGKILL) come at random gaps drawn uniformly from ``tm_gap`` (0–6 s), all the way
  through, except from ``quiet_before_leader_s`` before a leader fault until ``quiet_after_leader_s``
  after it: the time from a leader fault to RUNNING then measures the leader change alone, not a
  TaskManager loss on top of it nor tasks waiting for a just-started replacement's Spark JVM.
- Major faults (leader kill, leader pause, ZooKeeper restart, checkpoint storage outage) each get a slot
  of their own, in an order drawn from the seed, so one has recovered before the next begins. A slot is
  the run's duration divided evenly; the fault starts at a random point of its slot's first half.
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

    @property
    def leader_fault(self) -> bool:
        return self in (FaultKind.LEADER_KILL, FaultKind.LEADER_PAUSE)


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
    tm_gap: tuple[float, float] = (0.0, 6.0)
    pause_s: float = 6.0  # long enough for a standby to take the lease (lease 2 s)
    zookeeper_down_s: float = 3.0
    storage_down_s: float = 6.0
    quiet_after_leader_s: float = 10.0
    quiet_before_leader_s: float = 8.0  # a replacement TaskManager's Spark JVM comes up meanwhile
    min_slot_s: float = 20.0  # a major fault and its recovery fit in this

    def majors(self) -> list[tuple[FaultKind, float]]:
        return ([(FaultKind.LEADER_KILL, 0.0)] * self.leader_kills
                + [(FaultKind.LEADER_PAUSE, self.pause_s)] * self.leader_pauses
                + [(FaultKind.ZOOKEEPER_RESTART, self.zookeeper_down_s)] * self.zookeeper_restarts
                + [(FaultKind.STORAGE_OUTAGE, self.storage_down_s)] * self.storage_outages)


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
    faults = [Fault(round(i * slot + rng.uniform(0, slot / 2), 3), kind, duration)
              for i, (kind, duration) in enumerate(majors)]
    quiet = [(f.at - spec.quiet_before_leader_s, f.at + f.duration + spec.quiet_after_leader_s)
             for f in faults if f.kind.leader_fault]
    t = rng.uniform(lo, hi)
    while t < spec.duration:
        if not any(start <= t < end for start, end in quiet):
            faults.append(Fault(round(t, 3), FaultKind.TASKMANAGER_KILL))
        t += rng.uniform(lo, hi)
    return sorted(faults, key=lambda f: (f.at, f.kind.value))


def count_by_kind(faults: list[Fault]) -> dict[FaultKind, int]:
    """How many faults of each kind, every kind listed (0 for those absent)."""
    return {kind: sum(1 for f in faults if f.kind is kind) for kind in FaultKind}
