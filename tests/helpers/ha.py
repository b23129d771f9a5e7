"""Helpers for high-availability tests: what each JobManager answers by itself, a standby on hand, and a leader
stopped (SIGSTOP) at the moment it writes to the HA store."""
from __future__ import annotations

import json
import os
import signal
import time
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


def store_files_open_for_writing(pid: int, store: str) -> list[str]:
    """Files under the HA store ``store`` that process ``pid`` holds open for writing: a write of the lease
    or of a fenced entry in flight (announcements under jobmanagers/ and job data under jobs/ aside)."""
    aside = tuple(os.path.join(store, sub) + os.sep for sub in ("jobmanagers", "jobs"))
    found = []
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
            if not target.startswith(store + os.sep) or target.startswith(aside):
                continue
            with open(f"/proc/{pid}/fdinfo/{fd}", encoding="ascii") as fh:
                flags = int(next(line for line in fh if line.startswith("flags:")).split()[1], 8)
        except (OSError, StopIteration):
            continue  # closed meanwhile
        if flags & (os.O_WRONLY | os.O_RDWR):
            found.append(target)
    return found


def every_thread_stopped(pid: int) -> bool:
    """Whether SIGSTOP has reached every thread of ``pid`` (kill returns before it has)."""
    for tid in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{tid}/stat", encoding="ascii") as fh:
            if fh.read().rsplit(")", 1)[1].split()[0] not in ("T", "t"):
                return False
    return True


def stop_inside_a_store_write(pid: int, store: str, timeout: float = 120.0) -> str:
    """SIGSTOP ``pid`` while it writes to the HA store (a lease renewal, a checkpoint pointer, an id
    reservation) and leave it stopped; returns the file it holds open. Watches /proc for such a moment,
    stops the process, and keeps it stopped once every thread is and the file is still open; otherwise
    continues it at once (stopped for a few milliseconds, far below the lease) and watches again."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not store_files_open_for_writing(pid, store):
            continue
        os.kill(pid, signal.SIGSTOP)
        wait_until(lambda: every_thread_stopped(pid), 10, "every thread of the stopped process", interval=0.001)
        held = store_files_open_for_writing(pid, store)
        if held:
            return held[0]
        os.kill(pid, signal.SIGCONT)
    raise AssertionError(f"process {pid} was not caught writing to the HA store {store} within {timeout:g} s")
