"""The resource provider's decisions in the views: TaskManagers starting, then registered, then gone."""
from runtime.views.columns import provider_columns, slot_columns, status_text
from runtime.views.model import ClusterModel


def decision(seq, decision, tm_id, reason="", slots=2):
    return {"type": "ResourceProviderDecision", "seq": seq, "ts": 100.0 + seq, "decision": decision,
            "tm_id": tm_id, "reason": reason, "slots": slots}


def test_a_task_manager_is_shown_starting_then_registered_then_gone_after_it_is_stopped():
    m = ClusterModel()
    m.reset({"seq": 0, "taskmanagers": [], "jobs": []})
    m.set_connection("connected", "http://jm", "")
    m.apply(decision(1, "requested", "tm-a", "waiting requests need 2 more slots"))
    m.apply(decision(2, "started", "tm-a", "pid 42"))
    cols = slot_columns(m)
    assert cols["state"] == ["starting", "starting"] and cols["tm"] == ["tm-a (starting)"] * 2
    assert "0 TaskManagers (1 starting)" in status_text(m)

    m.apply({"type": "TaskManagerRegistered", "seq": 3, "tm_id": "tm-a", "host": "127.0.0.1", "data_port": 1,
             "slots": 2, "pid": 42})
    m.apply(decision(4, "registered", "tm-a"))
    assert slot_columns(m)["state"] == ["free", "free"]
    m.apply(decision(5, "idle", "tm-a"))
    m.apply(decision(6, "stopped", "tm-a", "idle for 30 s"))
    assert slot_columns(m)["state"] == [] and "0 TaskManagers" in status_text(m)
    decisions = provider_columns(m)
    assert decisions["decision"] == ["stopped", "idle", "registered", "started", "requested"]
    assert decisions["reason"][0] == "idle for 30 s"


def test_a_snapshot_brings_the_task_managers_starting_and_the_recent_decisions():
    m = ClusterModel()
    m.reset({"seq": 5, "taskmanagers": [], "jobs": [],
             "resource-provider": {"type": "local", "starting": ["tm-b"], "slots-per-taskmanager": 3,
                                   "decisions": [{"decision": "requested", "tm_id": "tm-b", "reason": "r", "ts": 1.0}]}})
    assert slot_columns(m)["state"] == ["starting"] * 3
    assert provider_columns(m)["tm_id"] == ["tm-b"]
