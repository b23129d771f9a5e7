"""File HA's decisions, pure: who may take the lease, whose fenced change is refused, what ids a reservation gets."""
from __future__ import annotations

from runtime.ha import file_state as fs
from runtime.ids import JobId, LeaderSessionId

A, B = LeaderSessionId("a" * 32), LeaderSessionId("b" * 32)
JOB = JobId("c" * 32)


def led_by(session: LeaderSessionId, expires: float = 10.0) -> fs.StoreState:
    return fs.StoreState(lease=fs.Lease("jm-" + session[0], "http://" + session[0], session, expires))


def test_a_valid_lease_keeps_others_out_and_is_renewed_with_its_session():
    state = led_by(A, expires=10.0)
    assert fs.take_lease(state, "jm-b", "http://b", now=9.0, duration=3.0, fresh=B) == (None, None)
    renewed, session = fs.take_lease(state, "jm-a", "http://a", now=9.0, duration=3.0, fresh=B)
    assert session == A and renewed.lease.expires == 12.0


def test_a_lapsed_lease_goes_to_whoever_asks_with_a_fresh_session_its_old_holder_too():
    state = led_by(A, expires=10.0)
    taken, session = fs.take_lease(state, "jm-b", "http://b", now=10.5, duration=3.0, fresh=B)
    assert session == B and taken.lease.address == "http://b"
    assert fs.take_lease(state, "jm-a", "http://a", now=10.5, duration=3.0, fresh=B)[1] == B


def test_only_the_session_holding_the_lease_may_change_fenced_entries_lapsed_or_not():
    assert fs.refusal(led_by(A, expires=1.0), A) is None, "lapsed, but nobody else took it"
    assert fs.refusal(led_by(B), A) == f"leader session {A} no longer holds the lease (held by http://b)"
    assert "held by nobody" in fs.refusal(fs.StoreState(), A)
    assert fs.leads(led_by(A, expires=10.0), A, now=9.0) and not fs.leads(led_by(A, expires=10.0), A, now=10.0)


def test_resign_drops_only_its_own_lease():
    assert fs.resign(led_by(A), B) is None
    assert fs.resign(led_by(A), A).lease is None


def test_ids_are_reserved_after_every_earlier_reservation_and_never_below_a_floor():
    state, first = fs.with_ids_reserved(led_by(A), JOB, 2, at_least=1)
    assert first == 1
    state, first = fs.with_ids_reserved(state, JOB, 2, at_least=2)
    assert first == 3
    assert fs.with_ids_reserved(state, JOB, 1, at_least=40)[1] == 40


def test_a_job_comes_and_goes_with_its_pointer_and_counter_and_the_state_survives_json():
    state = fs.with_job(led_by(A), JOB)
    assert fs.with_job(state, JOB) is None, "already listed: nothing to write"
    state = fs.with_pointer(state, JOB, "/chk-2", ())
    state = fs.with_ids_reserved(state, JOB, 2, at_least=1)[0]
    state = fs.with_users(state, {"version": 1, "users": []})
    assert fs.StoreState.from_json(state.to_json()) == state
    assert state.checkpoints[JOB] == {"directory": "/chk-2", "retained": ["/chk-2"]}
    gone = fs.without_job(state, JOB)
    assert (gone.jobs, gone.checkpoints, gone.counters) == ((), {}, {})
    assert fs.without_job(gone, JOB) is None
