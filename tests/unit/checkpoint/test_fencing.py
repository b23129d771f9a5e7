"""Storage operations ask the current thread's fence first: a refused one writes and deletes nothing,
is logged as a fenced write and traced like every other; a subtask's upload fence decides by its attempt,
its leader session and its heartbeats."""
from __future__ import annotations

import json
import logging

import pytest

from runtime.checkpoint import storage, trace
from runtime.checkpoint.fencing import FencedOut, UploadFence, fenced_by, run_fenced, upload_refusal
from runtime.taskmanager.heartbeat_lease import HeartbeatLease
from runtime.messages import Heartbeat, HeartbeatAck, RegisterTaskManager, RegistrationAccepted
from runtime.ids import LeaderSessionId, TaskManagerId


class Fence:
    def __init__(self, reason=None):
        self.reason = reason
        self.token = {"role": "jobmanager", "session": "s1"}

    def refusal(self):
        return self.reason


@pytest.fixture
def traced(tmp_path, monkeypatch):
    path = tmp_path / "trace.jsonl"
    monkeypatch.setenv(trace.ENV, str(path))
    return lambda: [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_a_refused_write_or_delete_touches_nothing_and_is_logged_and_traced(tmp_path, traced, caplog):
    kept = tmp_path / "chk-7"
    kept.mkdir()
    (kept / "_metadata").write_text("{}")
    url = storage.normalise(str(kept))
    with caplog.at_level(logging.WARNING), fenced_by(Fence("leader session s1 holds no confirmed lease")):
        with pytest.raises(FencedOut, match="fenced write refused: delete"):
            storage.remove(url)
        with pytest.raises(FencedOut):
            storage.write_json(storage.join(url, "late.json"), {})
    assert sorted(p.name for p in kept.iterdir()) == ["_metadata"]
    assert "fenced write refused" in caplog.text
    records = traced()
    assert [(r["op"], r["refused"] is not None, r["token"]["session"]) for r in records] == \
        [("delete", True, "s1"), ("write", True, "s1")]


def test_an_allowed_operation_is_traced_with_its_token_and_the_fence_ends_with_the_block(tmp_path, traced):
    url = storage.normalise(str(tmp_path / "x.json"))
    run_fenced(Fence(), storage.write_json, url, {"a": 1})
    storage.remove(url)  # no fence here any more
    first, second = traced()
    assert (first["op"], first["refused"], first["token"]["role"]) == ("write", None, "jobmanager")
    assert (second["op"], second["token"]) == ("delete", None) and not (tmp_path / "x.json").exists()


@pytest.mark.parametrize("cancelled, now, silence, refused", [
    (False, "s1", 0.5, None), (True, "s1", 0.5, "cancelled"), (False, "s2", 0.5, "no longer follows"),
    (False, None, 0.5, "no longer follows"), (False, "s1", 3.0, "declared it lost"),
])
def test_the_upload_decision(cancelled, now, silence, refused):
    reason = upload_refusal(cancelled, "s1", now, silence, 3.0)
    assert (reason is None) if refused is None else refused in reason


def test_the_upload_fence_reads_the_session_it_started_under_and_the_live_view_after():
    class TaskManager:
        leader_session_id = "s1"
        heartbeats = HeartbeatLease()
    tm = TaskManager()
    fence = UploadFence.of("a1", 7, tm, lambda: False)
    assert fence.refusal() is None and fence.token == {"role": "taskmanager", "attempt": "a1", "checkpoint": 7,
                                                       "session": "s1"}
    tm.leader_session_id = "s2"
    assert "no longer follows leader session s1" in fence.refusal()


def test_the_heartbeat_lease_counts_from_the_send_time_of_the_last_answered_heartbeat():
    now = [100.0]
    lease = HeartbeatLease(lambda: now[0])
    tm = TaskManagerId("tm-1")
    lease.wrote(RegisterTaskManager(tm, "h", 1, 1, 1, "local"))
    now[0] = 100.2
    lease.received(RegistrationAccepted(tm, LeaderSessionId("s" * 32), 0.5, 3.0))
    assert lease.timeout_s == 3.0 and lease.silence() == pytest.approx(0.2)
    now[0] = 100.5
    lease.wrote(Heartbeat(tm, []))
    now[0] = 110.0  # paused: the answer to the heartbeat sent at 100.5 arrives only now
    assert lease.silence() == pytest.approx(10.0)
    lease.received(HeartbeatAck(tm))
    assert lease.silence() == pytest.approx(9.5), "counted from when it was sent, not answered"
