"""File HA with two in-process contenders and a hand-driven clock: election, takeover, fencing."""
from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from runtime.config import ConfigError, Configuration
from runtime.ha.file import FileHaServices
from runtime.ha.file_register import FileRegister
from runtime.ha.drivers import ha_services
from runtime.ha.services import LeadershipLost, NoHaServices
from runtime.ids import JobId

LEASE = 3.0


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def pair(tmp_path, clock):
    """Two JobManagers' views of one storage directory."""
    return FileHaServices(str(tmp_path), LEASE, clock), FileHaServices(str(tmp_path), LEASE, clock)


def test_first_contender_leads_and_the_second_waits(pair):
    a, b = pair
    session = a.try_lead("jm-a", "http://127.0.0.1:1")
    assert session is not None
    assert b.try_lead("jm-b", "http://127.0.0.1:2") is None
    leader = b.leader()
    assert (leader.contender_id, leader.address, leader.session_id) == ("jm-a", "http://127.0.0.1:1", session)


def test_renewal_keeps_the_session_and_holds_off_the_standby(pair, clock):
    a, b = pair
    session = a.try_lead("jm-a", "a")
    for _ in range(5):
        clock.now += LEASE * 0.6
        assert a.try_lead("jm-a", "a") == session
        assert b.try_lead("jm-b", "b") is None


def test_standby_takes_over_once_the_lease_expires_with_a_new_session(pair, clock):
    a, b = pair
    old = a.try_lead("jm-a", "a")
    clock.now += LEASE + 0.01
    assert a.leader() is None
    new = b.try_lead("jm-b", "b")
    assert new is not None and new != old
    assert a.leader().address == "b"
    assert a.try_lead("jm-a", "a") is None, "the old leader cannot take the lease back"


def test_a_leader_whose_own_lease_lapsed_gets_a_new_session(pair, clock):
    a, _ = pair
    old = a.try_lead("jm-a", "a")
    clock.now += LEASE + 1
    assert a.try_lead("jm-a", "a") not in (None, old)


def test_resign_lets_a_standby_lead_at_once(pair):
    a, b = pair
    a.resign(a.try_lead("jm-a", "a"))
    assert b.try_lead("jm-b", "b") is not None


def test_store_round_trip_and_cleanup(pair):
    a, b = pair
    session = a.try_lead("jm-a", "a")
    job = JobId.new()
    a.put_job_graph(session, job, {"job_graph": {"name": "x"}, "job_id": job})
    a.put_checkpoint_pointer(session, job, "/tmp/chk-3")
    assert b.job_graphs() == {job: {"job_graph": {"name": "x"}, "job_id": job}}
    assert b.checkpoint_pointer(job) == "/tmp/chk-3"
    a.remove_job(session, job)
    assert b.job_graphs() == {} and b.checkpoint_pointer(job) is None


def test_a_deposed_leader_cannot_write(pair, clock):
    a, b = pair
    job = JobId.new()
    old = a.try_lead("jm-a", "a")
    a.put_checkpoint_pointer(old, job, "/chk-1")
    clock.now += LEASE + 1
    new = b.try_lead("jm-b", "b")
    b.put_checkpoint_pointer(new, job, "/chk-2")
    for write in (lambda: a.put_checkpoint_pointer(old, job, "/chk-stale"),
                  lambda: a.put_job_graph(old, job, {}), lambda: a.remove_job(old, job)):
        with pytest.raises(LeadershipLost, match="held by b"):
            write()
    assert b.checkpoint_pointer(job) == "/chk-2"


def test_members_drop_out_when_they_stop_announcing(pair, clock):
    a, b = pair
    a.announce("jm-a", "a", 1)
    b.announce("jm-b", "b", 2)
    assert [m["id"] for m in a.members()] == ["jm-a", "jm-b"]
    clock.now += LEASE * 2
    b.announce("jm-b", "b", 2)
    clock.now += LEASE * 2
    assert [m["id"] for m in a.members()] == ["jm-b"]


def test_services_follow_the_configuration(tmp_path):
    assert isinstance(ha_services(Configuration()), NoHaServices)
    conf = Configuration().with_overrides({"high-availability.type": "file"})
    assert isinstance(ha_services(conf, str(tmp_path)), FileHaServices)
    with pytest.raises(ConfigError, match="storageDir"):
        ha_services(conf)


def test_no_ha_always_leads_with_one_session():
    services = NoHaServices()
    session = services.try_lead("jm", "http://x")
    assert services.try_lead("jm", "http://x") == session
    assert services.leader().address == "http://x"


def test_checkpoint_ids_are_reserved_once_across_leaders_and_never_below_a_restored_one(pair, clock):
    a, b = pair
    job = JobId.new()
    old = a.try_lead("jm-a", "a")
    assert a.reserve_checkpoint_ids(old, job, 2, at_least=1) == 1
    assert a.reserve_checkpoint_ids(old, job, 2, at_least=1) == 3, "ids 1 and 2 are the old leader's"
    clock.now += LEASE + 1
    new = b.try_lead("jm-b", "b")
    with pytest.raises(LeadershipLost):
        a.reserve_checkpoint_ids(old, job, 2, at_least=1)
    assert b.reserve_checkpoint_ids(new, job, 2, at_least=2) == 5, "after every id its predecessor reserved"
    assert b.reserve_checkpoint_ids(new, job, 1, at_least=40) == 40, "a checkpoint from before the counter"
    b.remove_job(new, job)
    assert b.reserve_checkpoint_ids(new, job, 1, at_least=1) == 1, "the counter goes with the job"


def test_the_pointer_names_the_retained_checkpoints_and_an_old_one_is_read_as_its_own(pair, tmp_path):
    a, b = pair
    job = JobId.new()
    session = a.try_lead("jm-a", "a")
    a.put_checkpoint_pointer(session, job, "/chk-4", ("/chk-3", "/chk-4"))
    assert b.retained_checkpoints(job) == ["/chk-3", "/chk-4"] and b.checkpoint_pointer(job) == "/chk-4"
    register = FileRegister(str(tmp_path / "state"))
    version, document = register.read()
    document["checkpoints"][job] = {"directory": "/chk-2"}  # written before retained lists
    assert register.compare_and_set(version, document)
    assert b.retained_checkpoints(job) == ["/chk-2"] and b.checkpoint_pointer(job) == "/chk-2"


def test_the_user_table_is_written_under_the_leaders_fence_and_read_by_every_jobmanager(pair, clock):
    a, b = pair
    assert b.users() is None
    old = a.try_lead("jm-a", "a")
    a.put_users(old, {"version": 1, "users": []})
    assert b.users() == {"version": 1, "users": []}
    clock.now += LEASE + 0.01
    new = b.try_lead("jm-b", "b")
    with pytest.raises(LeadershipLost):
        a.put_users(old, {"version": 2, "users": []})
    b.put_users(new, {"version": 2, "users": []})
    assert a.users()["version"] == 2


@pytest.mark.parametrize("write", ["pointer", "checkpoint ids", "job graph", "users"])
def test_a_leader_stopped_in_the_middle_of_a_write_holds_nobody_back_and_its_write_never_lands(
        pair, clock, monkeypatch, write):
    """A leader stopped while its write is made durable (a long pause, a frozen VM) must not keep the
    standby from taking the lapsed lease, and the write it then finishes must not change what the
    successor holds. (The store once held a lock around every write: the standby waited on it for as long
    as the leader stayed stopped, and a chaos run's standby never took over.)"""
    a, b = pair
    job = JobId.new()
    old = a.try_lead("jm-a", "a")
    a.put_checkpoint_pointer(old, job, "/chk-1")
    inside, resume = threading.Event(), threading.Event()
    stopped: list[int] = []  # the thread that stands for the stopped leader
    fsync = os.fsync

    def stop_the_leader_here(fd):  # the stopped thread pauses while its write is being made durable
        if threading.get_ident() in stopped:
            inside.set()
            resume.wait(30)
        fsync(fd)
    monkeypatch.setattr(os, "fsync", stop_the_leader_here)
    late = {"pointer": lambda: a.put_checkpoint_pointer(old, job, "/chk-late"),
            "checkpoint ids": lambda: a.reserve_checkpoint_ids(old, job, 2, at_least=1),
            "job graph": lambda: a.put_job_graph(old, JobId.new(), {"job_graph": {}}),
            "users": lambda: a.put_users(old, {"version": 9, "users": []})}[write]
    with ThreadPoolExecutor(1) as paused, ThreadPoolExecutor(1) as standby:
        stopped.append(paused.submit(threading.get_ident).result())
        pending = paused.submit(late)
        assert inside.wait(10), "the leader's write never started"
        clock.now += LEASE + 1
        new = standby.submit(b.try_lead, "jm-b", "b").result(timeout=10)
        assert new not in (None, old) and not pending.done()
        b.put_checkpoint_pointer(new, job, "/chk-2")
        first = b.reserve_checkpoint_ids(new, job, 2, at_least=1)
        resume.set()
        with pytest.raises(LeadershipLost, match="held by b"):
            pending.result(timeout=10)
    assert b.checkpoint_pointer(job) == "/chk-2" and b.leader().session_id == new
    assert b.reserve_checkpoint_ids(new, job, 1, at_least=1) == first + 2, "no id was handed out twice"
    assert list(b.job_graphs()) == [] and os.listdir(tmp_dir(b, "jobgraphs")) == [] and b.users() is None


def tmp_dir(services: FileHaServices, kind: str) -> str:
    return os.path.join(services.root, kind)
