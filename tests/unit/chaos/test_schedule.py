"""The chaos run's fault schedule: seeded, every fault counted, TaskManager kills spaced 0-6 s apart and
kept out of the quiet window around each leader fault, major faults one per slot."""
from __future__ import annotations

import pytest

from tests.chaos.schedule import KILLS, Fault, FaultKind, ScheduleSpec, build_schedule, count_by_kind

SPEC = ScheduleSpec(duration=240, leader_kills=2, leader_pauses=1, zookeeper_restarts=1, storage_outages=1)


def test_the_same_seed_gives_the_same_schedule_and_another_seed_another():
    assert build_schedule(SPEC, 7) == build_schedule(SPEC, 7)
    assert build_schedule(SPEC, 7) != build_schedule(SPEC, 8)


def test_every_major_fault_is_scheduled_once_in_a_slot_of_its_own():
    faults = build_schedule(SPEC, 1)
    counts = count_by_kind(faults)
    assert (counts[FaultKind.LEADER_KILL], counts[FaultKind.LEADER_PAUSE], counts[FaultKind.ZOOKEEPER_RESTART],
            counts[FaultKind.STORAGE_OUTAGE]) == (2, 1, 1, 1)
    majors = [f for f in faults if f.kind is not FaultKind.TASKMANAGER_KILL]
    slot = SPEC.duration / 5
    assert sorted(int(f.at // slot) for f in majors) == [0, 1, 2, 3, 4]
    assert all(f.at % slot <= slot / 2 for f in majors), "each starts in its slot's first half"
    durations = {f.kind: f.duration for f in majors}
    assert durations == {FaultKind.LEADER_KILL: 0.0, FaultKind.LEADER_PAUSE: SPEC.pause_s,
                         FaultKind.ZOOKEEPER_RESTART: SPEC.zookeeper_down_s,
                         FaultKind.STORAGE_OUTAGE: SPEC.storage_down_s}


@pytest.mark.parametrize("seed", range(20))
def test_taskmanager_kills_come_0_to_6_s_apart_except_around_leader_faults(seed):
    faults = build_schedule(SPEC, seed)
    kills = [f.at for f in faults if f.kind is FaultKind.TASKMANAGER_KILL]
    quiet = [(f.at - SPEC.quiet_before_leader_s, f.at + f.duration + SPEC.quiet_after_leader_s)
             for f in faults if f.kind.leader_fault]
    assert all(not (a <= t < b) for t in kills for a, b in quiet), "no kill while a leader change is measured"
    assert kills == sorted(kills) and 0 <= kills[0] and kills[-1] < SPEC.duration
    assert kills[0] <= 6.0 or any(a <= 6.0 for a, _ in quiet)
    quiet_total = sum(b - a for a, b in quiet)
    for before, after in zip(kills, kills[1:]):
        if not any(before < b and a <= after for a, b in quiet):  # no quiet window in between
            assert after - before <= 6.0 + 0.001
    # 0-6 s gaps average 3 s: about (240 s - quiet) / 3 kills
    assert 0.6 * (SPEC.duration - quiet_total) / 3 <= len(kills) <= 1.5 * SPEC.duration / 3


def test_a_schedule_is_in_time_order():
    faults = build_schedule(SPEC, 3)
    assert [f.at for f in faults] == sorted(f.at for f in faults)
    assert all(isinstance(f, Fault) for f in faults)


def test_major_faults_that_do_not_fit_the_duration_are_refused_with_the_numbers():
    with pytest.raises(ValueError, match="5 major faults need at least 20 s each; 60 s gives 12.0 s"):
        build_schedule(ScheduleSpec(duration=60, zookeeper_restarts=1), 0)


def test_a_gap_range_that_never_advances_is_refused():
    with pytest.raises(ValueError, match="tm_gap"):
        build_schedule(ScheduleSpec(duration=100, tm_gap=(0.0, 0.0)), 0)


def test_only_taskmanager_kills_when_no_major_fault_is_asked():
    faults = build_schedule(ScheduleSpec(duration=30, leader_kills=0, leader_pauses=0, storage_outages=0), 5)
    assert faults and {f.kind for f in faults} == {FaultKind.TASKMANAGER_KILL}


@pytest.mark.parametrize("ha", ["file", "zookeeper"])
@pytest.mark.parametrize("duration", [150, 300, 1000])
def test_make_chaos_fits_every_major_fault_kind_into_its_duration(ha, duration):
    from tests.chaos.__main__ import long_schedule

    faults = build_schedule(long_schedule(ha, duration), 1)
    counts = count_by_kind(faults)
    each = max(1, duration // 150)
    assert counts[FaultKind.LEADER_KILL] == counts[FaultKind.LEADER_PAUSE] == counts[FaultKind.STORAGE_OUTAGE] \
        == counts[FaultKind.TASKMANAGER_PAUSE] == each
    assert counts[FaultKind.ZOOKEEPER_RESTART] == (each if ha == "zookeeper" else 0)
    assert sum(counts[k] for k in KILLS) >= duration / 10
    assert all(8.0 <= f.duration <= 15.0 for f in faults if f.kind is FaultKind.LEADER_PAUSE), "gray: past the lease"


def test_gray_runs_time_some_kills_to_each_phase_of_a_checkpoint_and_keep_kills_off_taskmanager_pauses():
    spec = ScheduleSpec(duration=300, leader_kills=1, leader_pauses=1, storage_outages=0, taskmanager_pauses=2,
                        timed_kills=True, pause_range=(8.0, 15.0))
    faults = build_schedule(spec, 4)
    counts = count_by_kind(faults)
    assert all(counts[k] > 0 for k in KILLS), counts
    pauses = [(f.at - spec.quiet_before_leader_s, f.at + f.duration + spec.quiet_after_leader_s)
              for f in faults if f.kind is FaultKind.TASKMANAGER_PAUSE]
    assert not [f for f in faults if f.kind.kill and any(a <= f.at < b for a, b in pauses)]
