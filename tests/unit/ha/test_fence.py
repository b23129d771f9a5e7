"""A JobManager's fence: its lease first (no I/O), then the HA store, then the lease again."""
from __future__ import annotations

import pytest

from runtime.ha.fence import LeaderFence, leader_refusal
from runtime.ha.file import FileHaServices
from runtime.ids import LeaderSessionId

S1, S2 = LeaderSessionId("1" * 32), LeaderSessionId("2" * 32)


class Lease:
    def __init__(self, *answers):
        self.answers = list(answers)

    def holds_lease(self, session):
        return self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]


class Store:
    def __init__(self, answer):
        self.answer, self.asked = answer, 0

    def leads(self, session):
        self.asked += 1
        if isinstance(self.answer, BaseException):
            raise self.answer
        return self.answer


@pytest.mark.parametrize("lease, store, refused", [
    (True, None, None), (True, True, None), (False, None, "no confirmed lease"), (False, True, "no confirmed lease"),
    (True, False, "no longer names"),
])
def test_the_decision(lease, store, refused):
    reason = leader_refusal(S1, lease, store)
    assert (reason is None) if refused is None else (refused in reason and S1 in reason)


def test_a_lapsed_lease_refuses_without_a_store_round_trip():
    store = Store(True)
    assert "no confirmed lease" in LeaderFence(store, Lease(False), S1).refusal() and store.asked == 0


def test_the_store_is_asked_and_its_answer_or_silence_decides():
    assert LeaderFence(Store(True), Lease(True), S1).refusal() is None
    assert "no longer names" in LeaderFence(Store(False), Lease(True), S1).refusal()
    assert "cannot confirm" in LeaderFence(Store(OSError("ZooKeeper did not answer")), Lease(True), S1).refusal()


def test_a_lease_lost_during_the_round_trip_refuses():
    assert "no confirmed lease" in LeaderFence(Store(True), Lease(True, False), S1).refusal()


def test_the_loops_fence_asks_the_lease_alone():
    store = Store(False)
    fence = LeaderFence(store, Lease(True), S1).lease_only()
    assert fence.refusal() is None and store.asked == 0 and fence.token == {"role": "jobmanager", "session": S1}


def test_file_ha_names_the_session_that_holds_an_unexpired_lease(tmp_path):
    clock = [1000.0]
    a = FileHaServices(str(tmp_path), 3.0, lambda: clock[0])
    b = FileHaServices(str(tmp_path), 3.0, lambda: clock[0])
    old = a.try_lead("jm-a", "a")
    assert a.leads(old) and b.leads(old)
    clock[0] += 4
    new = b.try_lead("jm-b", "b")
    assert not a.leads(old) and a.leads(new)
