"""Per-user slot quotas: reservations at admission, the refusal's message, release when a job ends."""
from __future__ import annotations

import pytest

from runtime.ids import JobId
from runtime.jobmanager.quotas import QuotaExceeded, SlotQuotas

A, B, C = (JobId(c * 32) for c in "abc")


def test_a_job_beyond_the_quota_is_refused_naming_quota_holdings_and_need():
    quotas = SlotQuotas()
    quotas.quotas = {"alice": 3}
    quotas.admit(A, "alice", "clicks", 2)
    with pytest.raises(QuotaExceeded) as refused:
        quotas.admit(B, "alice", "orders", 2)
    assert str(refused.value).startswith(
        "slot quota exceeded: user 'alice' may hold 3 slots and holds 2 ('clicks' 2); job 'orders' needs 2 more.")
    quotas.admit(C, "alice", "small", 1)
    assert quotas.held("alice") == 3


def test_an_ended_job_gives_its_slots_back_to_the_quota():
    quotas = SlotQuotas()
    quotas.quotas = {"alice": 1}
    quotas.admit(A, "alice", "one", 1)
    quotas.release(A)
    quotas.admit(B, "alice", "two", 1)
    assert quotas.user_of(B) == "alice" and quotas.user_of(A) is None


def test_no_quota_means_no_limit_and_a_resumed_job_is_not_checked():
    quotas = SlotQuotas()
    quotas.quotas = {"alice": 1}
    quotas.admit(A, "bob", "big", 50)
    quotas.admit(B, "alice", "resumed", 4, check=False)
    quotas.admit(B, "alice", "resumed", 4)  # a retried submission keeps its reservation
    assert quotas.held("bob") == 50 and quotas.held("alice") == 4
    with pytest.raises(QuotaExceeded, match="may hold 1 slot and holds 4"):
        quotas.admit(C, "alice", "more", 1)
