"""The fair share of free slots between users whose jobs wait: a pure state machine, no cluster."""
from __future__ import annotations

from runtime.jobmanager.fair_share import Capacity, FairShare, Grant, Requested, Withdrawn


def granted(grants: list[Grant]) -> list[int]:
    return [g.request for g in grants]


def test_requests_decide_nothing_until_capacity_is_known():
    share = FairShare()
    assert share.handle(Requested(1, "alice", 1)) == []
    assert share.handle(Capacity(1, {})) == [Grant(1, "alice", 1)]
    assert share.waiting == []


def test_the_user_holding_fewest_slots_goes_first_whoever_asked_first():
    share = FairShare()
    for request, user in ((1, "alice"), (2, "alice"), (3, "bob")):
        share.handle(Requested(request, user, 1))
    assert granted(share.handle(Capacity(1, {"alice": 2, "bob": 0}))) == [3]
    assert granted(share.handle(Capacity(1, {"alice": 2, "bob": 1}))) == [1], "then the oldest of alice's"


def test_free_slots_go_round_the_users_in_turn():
    share = FairShare()
    for request, user in ((1, "alice"), (2, "alice"), (3, "alice"), (4, "bob"), (5, "bob"), (6, "carol")):
        share.handle(Requested(request, user, 1))
    grants = share.handle(Capacity(4, {}))
    assert [g.user for g in grants] == ["alice", "bob", "carol", "alice"]
    assert granted(grants) == [1, 4, 6, 2]
    assert [w.request for w in share.waiting] == [3, 5]


def test_one_user_is_first_come_first_served():
    share = FairShare()
    for request, count in ((1, 2), (2, 1), (3, 1)):
        share.handle(Requested(request, "alice", count))
    assert granted(share.handle(Capacity(3, {"alice": 0}))) == [1, 2]


def test_a_fair_request_that_does_not_fit_is_not_overtaken():
    share = FairShare()
    share.handle(Requested(1, "bob", 3))
    share.handle(Requested(2, "alice", 1))
    assert share.handle(Capacity(2, {"alice": 2, "bob": 0})) == [], "bob's 3 wait for room; alice's 1 does not jump in"
    assert granted(share.handle(Capacity(3, {"alice": 2, "bob": 0}))) == [1]


def test_a_withdrawn_request_is_never_granted_and_a_repeated_one_counts_once():
    share = FairShare()
    share.handle(Requested(1, "alice", 1))
    share.handle(Requested(1, "alice", 1))
    share.handle(Requested(2, "bob", 1))
    share.handle(Withdrawn(2))
    share.handle(Withdrawn(99))
    assert granted(share.handle(Capacity(5, {}))) == [1]
    assert share.waiting == []
