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


def registered_taskmanagers(cluster) -> int:
    return sum(1 for tm in cluster.client.get("/taskmanagers")["taskmanagers"] if tm["state"] == "REGISTERED")


def new_leader(cluster, old: str, timeout: float = 60) -> str:
    return wait_until(lambda: (url := cluster.leader_url()) not in (None, old) and url, timeout, "a standby to lead")
