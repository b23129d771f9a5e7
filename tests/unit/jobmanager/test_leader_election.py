"""The JobManager's contention loop with a scripted HA store: it outlives every failure of the store,
stops serving while the store is unreachable and serves the same session again once it confirms."""
from __future__ import annotations

import asyncio

from runtime.ha.leadership import ConnectionSuspended, Reconnected, SessionLost
from runtime.ha.services import HaStoreUnavailable, LeaderInfo, NoHaServices
from runtime.ids import LeaderSessionId
from runtime.jobmanager.leader_election import LeaderElection

LEASE_S = 0.06


class TestingHaServices(NoHaServices):
    """A store whose answers to try_lead follow a script: a session, None (another leads) or an exception."""
    __test__ = False

    def __init__(self, script):
        super().__init__()
        self.lease_duration = LEASE_S
        self.script = list(script)
        self.listener = None

    def try_lead(self, contender_id, address):
        outcome = self.script.pop(0) if len(self.script) > 1 else self.script[0]
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome

    def leader(self):
        return None

    def watch_connection(self, listener):
        self.listener = listener


class RecordingTarget:
    def __init__(self):
        self.calls = []

    def leadership_granted(self, session, new):
        self.calls.append(("granted", session, new))

    def revoke_jobs(self, session):
        self.calls.append(("revoke", session))

    def recover_jobs(self, session):
        self.calls.append(("recover", session))


S1, S2 = LeaderSessionId("1" * 32), LeaderSessionId("2" * 32)


async def election_with(script):
    target = RecordingTarget()
    election = LeaderElection(TestingHaServices(script), "jm-test", target)
    election.start("http://127.0.0.1:1")
    return election, target


async def until(condition, timeout=2.0):
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "condition not reached"
        await asyncio.sleep(0.005)


def test_the_loop_outlives_any_exception_of_the_store_and_leads_once_it_answers():
    async def body():
        election, target = await election_with([RuntimeError("kazoo blew up"), HaStoreUnavailable("down"), S1])
        await until(lambda: election.serving)
        assert target.calls[:2] == [("granted", S1, True), ("recover", S1)]
        assert election._loop_task is not None and not election._loop_task.done()
        election.stop()
    asyncio.run(body())


def test_an_unreachable_store_suspends_serving_and_a_confirmation_resumes_the_same_session():
    async def body():
        election, target = await election_with([S1, S1, OSError("store unreachable"), S1])
        await until(lambda: election.serving)
        await until(lambda: not election.serving)
        assert election.state.session == S1, "suspended, not a standby: the jobs are kept"
        await until(lambda: election.serving)
        assert [c for c in target.calls if c[0] != "granted" or c[2]] == [("granted", S1, True), ("recover", S1)]
        election.stop()
    asyncio.run(body())


def test_a_lease_not_confirmed_in_time_stops_serving_even_while_the_store_call_hangs():
    async def body():
        election, _ = await election_with([S1])
        await until(lambda: election.serving)
        election._loop_task.cancel()  # as if a store call never returned
        await asyncio.sleep(LEASE_S * 1.5)
        assert not election.serving
    asyncio.run(body())


def test_connection_events_from_another_thread_suspend_and_a_lost_session_revokes_the_jobs():
    async def body():
        election, target = await election_with([S1])
        await until(lambda: election.serving)
        loop = asyncio.get_running_loop()
        listener = election.ha.listener
        await loop.run_in_executor(None, listener, ConnectionSuspended())
        await until(lambda: not election.serving)
        election.ha.script = [S2]
        await loop.run_in_executor(None, listener, SessionLost())
        await loop.run_in_executor(None, listener, Reconnected())
        await until(lambda: election.session == S2 and election.serving)
        assert ("revoke", S1) in target.calls
        assert target.calls.index(("revoke", S1)) < target.calls.index(("granted", S2, True))
        election.stop()
    asyncio.run(body())


def test_a_standby_answers_with_the_leader_it_read_and_never_serves():
    async def body():
        election, target = await election_with([None])
        election.ha.leader = lambda: LeaderInfo("jm-other", "http://other", S2)
        await until(lambda: election.known_leader is not None)
        assert not election.serving and election.known_leader.address == "http://other"
        assert target.calls == []
        election.stop()
    asyncio.run(body())


def test_the_lease_is_held_only_by_the_serving_session_and_lapses_unconfirmed():
    async def body():
        election, _ = await election_with([S1])
        await until(lambda: election.serving)
        assert election.holds_lease(S1) and not election.holds_lease(S2)
        election._loop_task.cancel()  # no more rounds, as in a process stopped with SIGSTOP
        await asyncio.sleep(LEASE_S * 1.5)
        assert not election.holds_lease(S1), "a fence asked after the pause refuses, whichever timer asks first"
    asyncio.run(body())


def test_a_held_election_keeps_the_lost_session_unnoticed_until_the_hold_ends():
    async def body():
        election, target = await election_with([S1])
        await until(lambda: election.serving)
        election.hold(LEASE_S * 4)
        await asyncio.get_running_loop().run_in_executor(None, election.ha.listener, SessionLost())
        await asyncio.sleep(LEASE_S * 2)
        assert ("revoke", S1) not in target.calls and election.state.session == S1, "held back"
        assert not election.holds_lease(S1), "yet its lease lapsed: its fences refuse"
        election.ha.script = [S2]
        await until(lambda: ("revoke", S1) in target.calls)
        election.stop()
    asyncio.run(body())
