"""Checkpoint ids from the HA store's counter, reserved ahead; two leaders of one job never share an id."""
from runtime.checkpoint import lifecycle_events as ev
from runtime.checkpoint.checkpoint_ids import RESERVE_BATCH, CheckpointIds
from runtime.checkpoint.lifecycle import CheckpointLifecycle, CheckpointSettings
from tests.unit.checkpoint.test_lifecycle import PARTICIPANTS, SRC, complete, complete_checkpoint, kinds


class Counter:
    """The HA store's counter for one job, as reserve_checkpoint_ids advances it."""

    def __init__(self):
        self.next = 1

    def reserve(self, action: ev.ReserveIds) -> ev.IdsReserved:
        first = max(self.next, action.at_least)
        self.next = first + action.count
        return ev.IdsReserved(first, action.count)


def leader() -> CheckpointLifecycle:
    return CheckpointLifecycle(CheckpointSettings(timeout_s=60.0, publishes=True, ids_from_store=True),
                               lambda cid, savepoint, target: f"mem://ck/chk-{cid}")


def run(m: CheckpointLifecycle, event, counter: Counter, now=100.0) -> list:
    """Handle ``event``, serving every reservation it asks for at once."""
    out = m.handle(event, now)
    for action in [a for a in out if isinstance(a, ev.ReserveIds)]:
        out += run(m, counter.reserve(action), counter, now)
    return out


def trigger(m, counter, periodic=False):
    return run(m, ev.TriggerRequested(True, PARTICIPANTS, (SRC,), periodic=periodic), counter)


def test_without_reserved_ids_a_users_trigger_is_refused_saying_why_and_a_periodic_one_waits():
    m = leader()
    out = m.handle(ev.TriggerRequested(True, PARTICIPANTS, (SRC,)), 100.0)
    assert kinds(out) == ["ReserveIds", "Refused"] and "no checkpoint id is reserved" in out[1].reason
    assert m.handle(ev.ReserveFailed("ZooKeeper did not answer"), 100.5) == [ev.ReserveIds(RESERVE_BATCH, 1)]
    assert m.handle(ev.TriggerRequested(True, PARTICIPANTS, (SRC,), periodic=True), 101.0) == []
    refused = m.handle(ev.TriggerRequested(True, PARTICIPANTS, (SRC,)), 101.0)
    assert "ZooKeeper did not answer" in refused[-1].reason, "the last failure is named"


def test_reserved_ids_are_used_in_order_and_topped_up_before_they_run_out():
    m, counter = leader(), Counter()
    run(m, ev.IdsWanted(), counter)
    started = []
    for _ in range(5):
        out = trigger(m, counter)
        started.append(next(a.checkpoint_id for a in out if isinstance(a, ev.Started)))
        complete(m, started[-1])
    assert started == [1, 2, 3, 4, 5] and m.ids.reserved, "always one in hand for the next trigger"


def test_a_new_leader_never_reuses_the_id_of_a_checkpoint_its_paused_predecessor_had_started():
    counter = Counter()
    old = leader()
    run(old, ev.IdsWanted(), counter)
    trigger(old, counter)
    complete(old, 1)
    pending = trigger(old, counter)  # P = 2 is in progress when the old leader is paused
    p = next(a for a in pending if isinstance(a, ev.Started))
    new = leader()
    new.start_from(complete_checkpoint(1, "mem://ck/chk-1"), retained=True)  # restores P - 1
    run(new, ev.IdsWanted(), counter)
    first = next(a for a in trigger(new, counter) if isinstance(a, ev.Started))
    assert first.checkpoint_id > p.checkpoint_id and first.directory != p.directory


def test_a_restored_checkpoint_drops_reserved_ids_below_it():
    ids = CheckpointIds(from_store=True)
    ids.reserved_ids(3, 4)
    ids.raise_floor(5)
    assert ids.reserved == [5, 6] and ids.wanted() is None
    assert ids.take() == 5 and ids.take() == 6 and ids.take() is None
    assert ids.wanted() == ev.ReserveIds(RESERVE_BATCH, 7)


def test_without_a_store_ids_follow_the_last_one_used_or_restored():
    ids = CheckpointIds(from_store=False)
    assert ids.take() == 1 and ids.wanted() is None
    ids.raise_floor(10)
    assert ids.take() == 10
