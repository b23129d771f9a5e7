"""What a cluster under fire says, asked of each JobManager directly with short timeouts: a paused
JobManager accepts connections but never answers, and a client that follows leaders would wait on it."""
from __future__ import annotations

import json
import time
import urllib.error
import urllib.request

from runtime.cluster import LocalCluster

PROBE_TIMEOUT_S = 2.0


def ask(url: str, token: str, path: str, timeout: float = PROBE_TIMEOUT_S) -> tuple[int, dict]:
    """``GET path`` of one JobManager: (status, body); status 0 when it cannot be reached in time."""
    req = urllib.request.Request(url + path, headers={"Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as err:
        try:
            return err.code, json.loads(err.read())
        except ValueError:
            return err.code, {}
    except (OSError, ValueError):
        return 0, {}


def live_urls(cluster: LocalCluster, skip: tuple[str, ...] = ()) -> list[str]:
    """The addresses of the JobManager processes still alive, less ``skip`` (a paused one)."""
    return [url for url, jm in zip(cluster.urls, cluster.jobmanager_processes) if jm.alive() and url not in skip]


def job_running_at(cluster: LocalCluster, job_id: str, skip: tuple[str, ...] = ()) -> str | None:
    """The JobManager that serves the job running (:func:`running`), or None while none does."""
    for url in live_urls(cluster, skip):
        status, job = ask(url, cluster.token, f"/jobs/{job_id}")
        if status == 200 and running(job):
            return url
    return None


def running(job: dict) -> bool:
    """Whether a job's details (``GET /jobs/<id>``) say it runs: the job RUNNING with every subtask RUNNING or
    FINISHED (a source subtask whose input ended finishes while the others still run, and the job finishes
    once every subtask has: near the end of the input, every subtask RUNNING may never hold again), or the
    job FINISHED since."""
    subtasks = [s.get("status") for v in job.get("vertices", []) for s in v.get("subtasks", [])]
    return job.get("state") == "FINISHED" or (
        job.get("state") == "RUNNING" and bool(subtasks) and all(s in ("RUNNING", "FINISHED") for s in subtasks))


def job_state(cluster: LocalCluster, job_id: str, skip: tuple[str, ...] = ()) -> str | None:
    """The job's state as the JobManager serving it says, or None while none serves it."""
    for url in live_urls(cluster, skip):
        status, job = ask(url, cluster.token, f"/jobs/{job_id}")
        if status == 200:
            return job.get("state")
    return None


def job_details(cluster: LocalCluster, job_id: str) -> dict:
    for url in live_urls(cluster):
        status, job = ask(url, cluster.token, f"/jobs/{job_id}")
        if status == 200:
            return job
    return {}


def checkpoint_counts(cluster: LocalCluster, job_id: str, skip: tuple[str, ...] = ()) -> dict | None:
    """The serving leader's checkpoint counts for the job (completed, failed, ...), or None."""
    for url in live_urls(cluster, skip):
        status, stats = ask(url, cluster.token, f"/jobs/{job_id}/checkpoints")
        if status == 200:
            return stats["counts"]
    return None


def last_checkpoint_failure(cluster: LocalCluster, job_id: str) -> str:
    """Why the job's latest failed checkpoint failed, as the serving leader says ("" if none failed)."""
    for url in live_urls(cluster):
        status, stats = ask(url, cluster.token, f"/jobs/{job_id}/checkpoints")
        if status == 200:
            return ((stats.get("latest") or {}).get("failed") or {}).get("failure_message") or ""
    return ""


def roles(cluster: LocalCluster, skip: tuple[str, ...] = ()) -> dict[str, str]:
    """Each live JobManager's own word on its role: leader, suspended or standby ('?' if silent)."""
    return {url: ask(url, cluster.token, "/jobmanagers")[1].get("role", "?") for url in live_urls(cluster, skip)}


def leader(cluster: LocalCluster, skip: tuple[str, ...] = ()) -> str | None:
    """The one JobManager that says it leads, or None while none (or more than one) does."""
    leading = [url for url, role in roles(cluster, skip).items() if role == "leader"]
    return leading[0] if len(leading) == 1 else None


def registered_taskmanagers(cluster: LocalCluster, skip: tuple[str, ...] = ()) -> list[dict]:
    url = leader(cluster, skip)
    if url is None:
        return []
    status, body = ask(url, cluster.token, "/taskmanagers")
    return [tm for tm in body.get("taskmanagers", []) if tm.get("state") == "REGISTERED"] if status == 200 else []


def wait_for(condition, timeout: float, what: str, interval: float = 0.1):
    """Poll ``condition`` until truthy; returns (value, seconds waited). TimeoutError names ``what``."""
    start = time.monotonic()
    while True:
        value = condition()
        if value:
            return value, time.monotonic() - start
        if time.monotonic() - start > timeout:
            raise TimeoutError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(interval)
