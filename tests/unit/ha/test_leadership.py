"""The leadership state machine alone: events in, actions out, no store and no loop."""
from __future__ import annotations

import pytest

from runtime.ha.leadership import (STANDBY, ConnectionSuspended, ContendNow, LeaseConfirmed, LeaseHeldByOther,
                                   Leadership, Reconnected, RecoverJobs, RevokeJobs, Role, SessionLost,
                                   StartServing, StopServing, advance)
from runtime.ids import LeaderSessionId

S1, S2 = LeaderSessionId("a" * 32), LeaderSessionId("b" * 32)
LEADING = Leadership(Role.LEADING, S1)
SUSPENDED = Leadership(Role.SUSPENDED, S1)


def run(state, *events):
    """Feed events one by one; the final state and every action, in order."""
    actions = []
    for event in events:
        state, more = advance(state, event)
        actions += more
    return state, actions


def test_a_standby_that_wins_serves_and_recovers_the_stored_jobs():
    state, actions = advance(STANDBY, LeaseConfirmed(S1))
    assert state == LEADING and state.serving
    assert actions == [StartServing(S1, new=True), RecoverJobs(S1)]


def test_renewing_the_same_lease_changes_nothing_and_recovers_nothing():
    state, actions = advance(LEADING, LeaseConfirmed(S1))
    assert state == LEADING
    assert actions == [StartServing(S1, new=False)]


def test_a_suspended_connection_stops_serving_but_keeps_the_jobs():
    state, actions = advance(LEADING, ConnectionSuspended())
    assert state == SUSPENDED and not state.serving
    assert actions == [StopServing()]


def test_a_reconnect_with_the_session_alive_confirms_and_serves_the_same_session_and_jobs():
    state, actions = run(LEADING, ConnectionSuspended(), Reconnected(), LeaseConfirmed(S1))
    assert state == LEADING
    assert actions == [StopServing(), ContendNow(), StartServing(S1, new=False)]
    assert not any(isinstance(a, (RevokeJobs, RecoverJobs)) for a in actions)


def test_a_reconnect_that_finds_another_leader_revokes_the_old_jobs():
    state, actions = run(LEADING, ConnectionSuspended(), Reconnected(), LeaseHeldByOther())
    assert state == STANDBY
    assert actions == [StopServing(), ContendNow(), StopServing(), RevokeJobs(S1)]


def test_a_lost_session_revokes_and_contends_from_scratch():
    state, actions = run(SUSPENDED, SessionLost())
    assert state == STANDBY
    assert actions == [StopServing(), RevokeJobs(S1), ContendNow()]
    state, actions = advance(state, LeaseConfirmed(S2))
    assert state == Leadership(Role.LEADING, S2)
    assert actions == [StartServing(S2, new=True), RecoverJobs(S2)]


@pytest.mark.parametrize("before", [LEADING, SUSPENDED], ids=["leading", "suspended"])
def test_winning_under_a_new_session_first_revokes_the_jobs_of_the_old_one(before):
    state, actions = advance(before, LeaseConfirmed(S2))
    assert state == Leadership(Role.LEADING, S2)
    assert actions == [StopServing(), RevokeJobs(S1), StartServing(S2, new=True), RecoverJobs(S2)]


def test_a_leader_paused_past_its_lease_finds_it_taken_and_steps_down():
    state, actions = run(LEADING, ConnectionSuspended(), LeaseHeldByOther())
    assert state == STANDBY
    assert RevokeJobs(S1) in actions and not any(isinstance(a, StartServing) for a in actions)


@pytest.mark.parametrize("event", [LeaseHeldByOther(), ConnectionSuspended()], ids=["held", "suspended"])
def test_a_standby_stays_a_standby_and_does_nothing(event):
    assert advance(STANDBY, event) == (STANDBY, [])


@pytest.mark.parametrize("event", [Reconnected(), SessionLost()], ids=["reconnected", "session-lost"])
def test_a_standby_contends_at_once_after_its_connection_comes_back(event):
    assert advance(STANDBY, event) == (STANDBY, [ContendNow()])


def test_suspension_is_idempotent_and_a_suspended_state_never_serves():
    state, actions = run(SUSPENDED, ConnectionSuspended(), ConnectionSuspended())
    assert state == SUSPENDED and actions == [] and not state.serving


def test_every_event_is_legal_in_every_state():
    events = [LeaseConfirmed(S1), LeaseConfirmed(S2), LeaseHeldByOther(), ConnectionSuspended(), Reconnected(),
              SessionLost()]
    for state in (STANDBY, LEADING, SUSPENDED):
        for event in events:
            after, actions = advance(state, event)
            revoked = [a.session for a in actions if isinstance(a, RevokeJobs)]
            assert revoked in ([], [S1]), "only the session it held is ever revoked"
            assert after.serving == (after.role is Role.LEADING)


def test_a_non_event_is_refused_by_name():
    with pytest.raises(TypeError, match="not a leadership event"):
        advance(STANDBY, "lease?")
