"""Reading the same facts from a live view's data sources and from the REST API, inside a test
notebook's kernel: the notebook prints both, and the test compares them."""
from __future__ import annotations

import json

from tests.helpers.clusters import wait_until


def report(**facts) -> None:
    """Print facts for the test to read back (tests.helpers.notebooks.json_lines)."""
    print("CHECK " + json.dumps(facts, default=str))


def same_moment(read_view, read_rest, what: str, timeout: float = 30.0):
    """Both readings taken together, retried until they agree or ``timeout`` passes (the view trails
    the JobManager by one event and one redraw); returns the last pair either way."""
    last = {}

    def agree():
        last["view"], last["rest"] = read_view(), read_rest()
        return last["view"] == last["rest"]

    try:
        wait_until(agree, timeout, what)
    except AssertionError:
        pass
    return last["view"], last["rest"]


def view_slots(view) -> list:
    """(TaskManager, slot, job) of every live slot in a view's slot source."""
    d = view.views.sources["slots"].data
    return sorted([t, i, j] for t, i, j, s in zip(d["tm_id"], d["slot"], d["job_id"], d["state"]) if s != "lost")


def rest_slots(client) -> list:
    return sorted([tm["id"], s["index"], s.get("job-id") or ""] for tm in client.get("/taskmanagers")["taskmanagers"]
                  if tm.get("state") != "LOST" for s in tm["slots"])


def view_lost(view) -> list:
    d = view.views.sources["slots"].data
    return sorted({t for t, s in zip(d["tm_id"], d["state"]) if s == "lost"})


def rest_lost(client) -> list:
    return sorted(tm["id"] for tm in client.get("/taskmanagers")["taskmanagers"] if tm.get("state") == "LOST")


def view_checkpoints(view, since: int = 0) -> dict:
    d = view.views.sources["checkpoints"].data
    return {"completed": sorted(i for i, s in zip(d["id"], d["status"]) if s == "COMPLETED" and i >= since),
            "restored": sorted(i for i, r in zip(d["id"], d["restored"]) if r)}


def oldest_listed_checkpoint(client, job_id: str) -> int:
    """REST lists a bounded history; comparisons start from its oldest entry."""
    return min((h["id"] for h in client.get(f"/jobs/{job_id}/checkpoints")["history"]), default=0)


def rest_checkpoints(client, job_id: str, since: int = 0) -> dict:
    stats = client.get(f"/jobs/{job_id}/checkpoints")
    restored = (stats.get("latest") or {}).get("restored")
    return {"completed": sorted(h["id"] for h in stats["history"] if h["status"] == "COMPLETED" and h["id"] >= since),
            "restored": [restored["id"]] if restored else []}


def view_failover(view) -> dict:
    d = view.views.sources["jobs"].data
    i = d["job_id"].index(view.job_id)
    return {"state": d["state"][i], "restarts": d["restarts"][i]}


def rest_failover(client, job_id: str) -> dict:
    job = client.get(f"/jobs/{job_id}")
    return {"state": job["state"], "restarts": job["restarts"]}
