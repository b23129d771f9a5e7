"""Helpers for high-availability tests: what each JobManager answers by itself, and a standby on hand."""
from __future__ import annotations

import json
import urllib.error
import urllib.request

from tests.helpers.clusters import wait_until


def raw_call(url: str, token: str, method: str, path: str, body=None) -> tuple[int, dict]:
    """One HTTP call with no leader following, to see what a JobManager itself answers."""
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url + path, data=data, method=method,
                                 headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def live_jobmanagers(cluster) -> int:
    return sum(1 for jm in cluster.jobmanager_processes if jm.alive())


def with_standby(cluster) -> None:
    """Each test starts from a leader and at least one standby, whatever the tests before it killed."""
    if live_jobmanagers(cluster) < 2:
        cluster.start_jobmanager()
    wait_until(lambda: len(cluster.client.get("/jobmanagers")["jobmanagers"]) >= 2, 30, "two live JobManagers")


def own_role(cluster, url: str) -> str:
    """What a JobManager says of itself: leader, suspended or standby."""
    return raw_call(url, cluster.token, "GET", "/jobmanagers")[1]["role"]


def serving(cluster, path: str) -> list[str]:
    """The live JobManagers that answer ``GET path`` themselves (200) rather than refuse (503)."""
    live = [url for url, jm in zip(cluster.urls, cluster.jobmanager_processes) if jm.alive()]
    return [url for url in live if raw_call(url, cluster.token, "GET", path)[0] == 200]


def registered_taskmanagers(cluster, via: str | None = None) -> int:
    """TaskManagers registered with the leader; ``via`` asks that JobManager itself (not the cluster's
    client, which tries the JobManagers in order and waits out its timeout on a paused one)."""
    listed = raw_call(via, cluster.token, "GET", "/taskmanagers")[1] if via else cluster.client.get("/taskmanagers")
    return sum(1 for tm in listed["taskmanagers"] if tm["state"] == "REGISTERED")


def new_leader(cluster, old: str, timeout: float = 60) -> str:
    """The leader that the live JobManagers other than ``old`` name, once it is not ``old``: asked
    directly, so that a paused ``old`` costs no client timeout."""
    others = [url for url, jm in zip(cluster.urls, cluster.jobmanager_processes) if jm.alive() and url != old]

    def named() -> str | None:
        for url in others:
            try:
                status, view = raw_call(url, cluster.token, "GET", "/jobmanagers")
            except OSError:  # not listening (yet)
                continue
            leader = (view.get("leader") or {}).get("url", "").rstrip("/") if status == 200 else ""
            if leader and leader != old:
                return leader
        return None
    return wait_until(named, timeout, "a standby to lead")
