"""A blocking client for the JobManager's REST API, shared by the CLI, the DataStream API and the magics;
a submitted job's handle is runtime.job_client.JobClient.

Errors from the cluster arrive as :class:`ClusterError` carrying the server's own message, so a
caller can show one clear line instead of an HTTP traceback.
"""
from __future__ import annotations

import datetime
import decimal
import json
import os
import secrets
import ssl
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any


from runtime.config import ConfigError
from runtime.errors import CheckpointError, ClusterError, JobFailed  # noqa: F401 - part of this module's API
from runtime.ha.retrieval import LeaderRetrieval
from runtime.job_client import JobClient
from runtime import tls
from runtime.security import read_token_file
from runtime.states import TERMINAL_JOB_STATES

TERMINAL_STATES = TERMINAL_JOB_STATES  # a job's end states by name
FAILOVER_TIMEOUT_S = 60.0  # how long a client of several JobManagers waits for one of them to lead
FAILOVER_POLL_S = 0.2


class RestClient:
    """Talks to one JobManager, or follows the leader among several.

    ``url`` may name several JobManagers (a list, or comma-separated): the client then retries a call
    that finds no JobManager on the others, for up to ``failover_timeout`` seconds (a standby needs
    about one lease duration to take over). Any client follows a standby's refusal to the leader it
    names. Given the cluster's HA settings (``ha``: its ``high-availability.*`` keys, e.g. the
    ZooKeeper quorum), the client also asks the HA services who leads once the JobManagers it knows stop
    answering, so it finds a leader started at an address it was never told; with ``ha`` the ``url``
    may be left out and the leader is looked up at once.
    """

    def __init__(self, url: str | list[str] | None = None, token: str | None = None, token_file: str | None = None,
                 timeout: float = 30.0, failover_timeout: float | None = None, ha: dict[str, str] | None = None,
                 trust_cert: str | None = None):
        self.retrieval = LeaderRetrieval(ha) if ha else None
        given = url.split(",") if isinstance(url, str) else (url or [])
        self.urls = [u.strip().rstrip("/") for u in given if u.strip()]
        if not self.urls:
            leader = self._leader_from_ha()
            if leader is None:
                self.close()
                raise ClusterError("no JobManager address given, and the HA services name no leader (yet)"
                                   if self.retrieval else "no JobManager address given")
            self.urls = [leader]
        self.url = self.urls[0]
        self.token = token if token is not None else (read_token_file(token_file) if token_file else None)
        self.trust_cert = trust_cert  # PEM CA certificates an https JobManager is verified against; None: the system's
        self.timeout = timeout
        self.failover_timeout = failover_timeout if failover_timeout is not None else (
            FAILOVER_TIMEOUT_S if len(self.urls) > 1 or self.retrieval else 0.0)

    def follow_ha(self, ha: dict[str, str]) -> None:
        """From now on, also find the leader through these HA settings (see the class docstring)."""
        self.close()
        self.retrieval = LeaderRetrieval(ha)
        self.failover_timeout = max(self.failover_timeout, FAILOVER_TIMEOUT_S)

    def close(self) -> None:
        """Let go of the HA store the leader was looked up in (a ZooKeeper session and its thread, which
        would otherwise outlive the client); a later lookup opens it again."""
        if self.retrieval is not None:
            self.retrieval.close()

    def __enter__(self) -> RestClient:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def add_jobmanagers(self, urls: list[str]) -> None:
        """More JobManagers of the same cluster to try when the current one stops answering."""
        for url in urls:
            if url and url.rstrip("/") not in self.urls:
                self.urls.append(url.rstrip("/"))
        if len(self.urls) > 1:
            self.failover_timeout = max(self.failover_timeout, FAILOVER_TIMEOUT_S)

    @classmethod
    def from_environment(cls) -> RestClient:
        """The cluster named by FLINKBENCH_JOBMANAGER_URL and FLINKBENCH_TOKEN_FILE (set by LocalCluster), verified
        against FLINKBENCH_SECURITY_SSL_REST_TRUST_CERT when it is https."""
        url = os.environ.get("FLINKBENCH_JOBMANAGER_URL")
        if not url:
            raise ClusterError("no JobManager to submit to: start one with LocalCluster or "
                               "'flinkbench cluster start', or set FLINKBENCH_JOBMANAGER_URL")
        return cls(url, token=os.environ.get("FLINKBENCH_TOKEN"), token_file=os.environ.get("FLINKBENCH_TOKEN_FILE"),
                   trust_cert=tls.trust_from_environment())

    @property
    def ssl_context(self) -> ssl.SSLContext:
        """How an https JobManager's certificate and host name are verified (shared, made on first use)."""
        return tls.client_context(self.trust_cert)

    # -- HTTP ---------------------------------------------------------------------------------
    def request(self, method: str, path: str, body: Any = None, raw: bool = False):
        """One call to the leader: follows a standby's pointer to it, and with several JobManagers
        tries the others while none answers (a failover in progress)."""
        deadline = time.monotonic() + self.failover_timeout
        while True:
            try:
                return self._request_once(method, path, body, raw)
            except _NotLeader as refusal:
                if refusal.leader and refusal.leader != self.url:
                    self._follow(refusal.leader)
                    continue
                error = ClusterError(str(refusal), 503)
            except _Unreachable as err:
                error = ClusterError(str(err))
            if time.monotonic() >= deadline:
                raise error
            self._next_candidate()
            time.sleep(FAILOVER_POLL_S)

    def _follow(self, leader: str) -> None:
        self.url = leader.rstrip("/")
        if self.url not in self.urls:
            self.urls.append(self.url)

    def _next_candidate(self) -> None:
        """The leader the HA services name, if any other than the one that failed; else the next address."""
        leader = self._leader_from_ha()
        if leader is not None and leader != self.url:
            self._follow(leader)
            return
        self.url = self.urls[(self.urls.index(self.url) + 1) % len(self.urls)]

    def _leader_from_ha(self) -> str | None:
        if self.retrieval is None:
            return None
        try:
            return self.retrieval.leader_address()
        except (OSError, ConfigError):  # the store is unreachable too: keep trying the addresses known
            return None

    def _request_once(self, method: str, path: str, body: Any, raw: bool):
        data = json.dumps(body, default=_json_value).encode() if body is not None else None
        req = urllib.request.Request(self.url + path, data=data, method=method)
        if data is not None:
            req.add_header("Content-Type", "application/json")
        if self.token:
            req.add_header("Authorization", f"Bearer {self.token}")
        try:
            context = self.ssl_context if self.url.startswith("https://") else None
            with urllib.request.urlopen(req, timeout=self.timeout, context=context) as resp:
                payload = resp.read()
                return (payload, dict(resp.headers)) if raw else (json.loads(payload) if payload else {})
        except urllib.error.HTTPError as err:
            body = _error_body(err)
            if err.code == 503:  # a standby (naming the leader if it knows one), or a request to retry
                raise _NotLeader(_error_message(err, body), body.get("leader")) from None
            raise ClusterError(_error_message(err, body), err.code) from None
        except (urllib.error.URLError, OSError) as err:
            reason = getattr(err, "reason", err)
            if isinstance(reason, ssl.SSLCertVerificationError):  # not a failover: the wrong CA or host name
                raise ClusterError(f"the JobManager at {self.url} presented a certificate that does not verify "
                                   f"against {self.trust_cert or 'the system CAs'}: {reason.verify_message}") from None
            raise _Unreachable(f"cannot reach the JobManager at {self.url}: {reason}") from None

    def get(self, path: str):
        return self.request("GET", path)

    def post(self, path: str, body: Any = None):
        return self.request("POST", path, body if body is not None else {})

    def patch(self, path: str):
        return self.request("PATCH", path)

    # -- jobs ---------------------------------------------------------------------------------
    def submit(self, job_graph: dict, job_id: str | None = None) -> JobClient:
        """Submit a job under an id named here (as Flink's JobGraph carries one), so that the retries
        :meth:`request` makes across a failover return the job already accepted instead of a second one."""
        reply = self.post("/jobs", {"job_graph": job_graph, "job_id": job_id or secrets.token_hex(16)})
        return JobClient(self, reply["jobid"])

    def job(self, job_id: str) -> JobClient:
        return JobClient(self, job_id)

    def overview(self) -> dict:
        return self.get("/overview")

    def jobs(self) -> list[dict]:
        return self.get("/jobs/overview")["jobs"]

    def dispose_savepoint(self, path: str, timeout: float = 300.0) -> None:
        """Delete a savepoint (or retained checkpoint) through the JobManager, as ``flink savepoint -d`` does."""
        request_id = self.post("/savepoint-disposal", {"savepoint-path": path})["request-id"]
        self.await_operation(f"/savepoint-disposal/{request_id}", f"disposal of savepoint {path}", timeout)

    def await_operation(self, status_path: str, what: str, timeout: float, poll: float = 0.2) -> dict:
        """Poll an asynchronous operation (Flink's trigger/status pair) until COMPLETED and return its
        ``operation`` part; CheckpointError with the failure cause, TimeoutError after ``timeout``."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            status = self.get(status_path)
            if status["status"]["id"] == "COMPLETED":
                operation = status.get("operation") or {}
                cause = operation.get("failure-cause") or operation.get("failureCause")
                if cause:
                    raise CheckpointError(f"{what} failed: {cause.get('stack-trace', cause)}")
                return operation
            time.sleep(poll)
        raise TimeoutError(f"{what} not complete after {timeout:g} s")


def _json_value(value):
    """Values rows carry that JSON lacks: dates and times as ISO text (the JobManager parses them back),
    decimals as text, numpy scalars as Python numbers."""
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return str(value)
    if hasattr(value, "item"):
        return value.item()
    raise TypeError(f"a {type(value).__name__} cannot be sent as JSON")


def _error_body(err: urllib.error.HTTPError) -> dict:
    try:
        body = json.loads(err.read() or b"{}")
    except (ValueError, OSError):
        return {}
    return body if isinstance(body, dict) else {}


def _error_message(err: urllib.error.HTTPError, body: dict) -> str:
    errors = body.get("errors")
    if errors:
        return "; ".join(str(e) for e in errors)
    return f"HTTP {err.code}: {err.reason}"


class _NotLeader(Exception):
    """A standby refused the call; ``leader`` is the address it named (None while none is elected)."""

    def __init__(self, message: str, leader: str | None):
        super().__init__(message)
        self.leader = leader


class _Unreachable(Exception):
    """No JobManager answered at the address tried."""
