"""Where the event stream reconnects when its JobManager is gone: the leader and JobManagers the last
snapshot named, then every address it was given, so a standby the snapshot did not list is found."""
from __future__ import annotations

from runtime.views.model import ClusterModel
from runtime.views.stream import EventStream

A, B = "http://127.0.0.1:8081", "http://127.0.0.1:8082"


def lone_leader_snapshot() -> dict:
    """A leader's snapshot taken before its standby first announced itself: the standby is not listed."""
    return {"type": "ClusterSnapshot", "seq": 1, "ts": 1.0, "taskmanagers": [], "jobs": [],
            "leader": {"url": A, "session-id": "s1"}, "jobmanagers": [{"url": A, "role": "leader", "pid": 1}]}


def test_a_standby_missing_from_the_snapshot_is_still_tried_when_given():
    model = ClusterModel()
    model.reset(lone_leader_snapshot())
    assert EventStream(model, A, None)._candidates() == [A], "from the snapshot alone the standby is unknown"
    stream = EventStream(model, A, None, addresses=[A, B + "/"])
    assert stream._candidates() == [A, B]


def test_the_snapshot_comes_first_and_no_address_twice():
    model = ClusterModel()
    snapshot = lone_leader_snapshot()
    snapshot["jobmanagers"].append({"url": B, "role": "standby", "pid": 2})
    model.reset(snapshot)
    stream = EventStream(model, B, None, addresses=["http://127.0.0.1:8083", A])
    assert stream._candidates() == [B, A, "http://127.0.0.1:8083"]
