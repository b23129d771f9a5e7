"""A handle on one submitted job (Flink's JobClient): its state, savepoints and checkpoints, its push
sources, and the rows its collect sinks deliver. It talks to the cluster through the REST client
(runtime.client.RestClient), seen here as the few calls :class:`RestCalls` names.
"""
from __future__ import annotations

import io
import secrets
import time
import urllib.parse
from collections.abc import Iterator
from typing import Any, Protocol

import pyarrow as pa
import pyarrow.ipc as ipc

from runtime.arrow_ipc import table_to_b64
from runtime.connectors.push import table_of
from runtime.errors import JobFailed
from runtime.states import TERMINAL_JOB_STATES


class RestCalls(Protocol):
    """What a JobClient asks of the REST client (runtime.client.RestClient)."""

    def get(self, path: str) -> Any: ...

    def post(self, path: str, body: Any = None) -> Any: ...

    def patch(self, path: str) -> Any: ...

    def request(self, method: str, path: str, body: Any = None, raw: bool = False) -> Any: ...

    def await_operation(self, status_path: str, what: str, timeout: float, poll: float = 0.2) -> dict:
        """Poll a trigger's status until COMPLETED; its ``operation`` part."""
        ...


class JobClient:
    """A handle on one submitted job (Flink's JobClient)."""

    def __init__(self, rest: RestCalls, job_id: str):
        self.rest = rest
        self.job_id = job_id
        self._offset = 0

    def __repr__(self) -> str:
        return f"JobClient({self.job_id})"

    def details(self) -> dict:
        return self.rest.get(f"/jobs/{self.job_id}")

    def status(self) -> str:
        return self.details()["state"]

    def exceptions(self) -> dict:
        return self.rest.get(f"/jobs/{self.job_id}/exceptions")

    def plan(self) -> dict:
        """The job's tasks and exchanges (Flink's ``/jobs/<id>/plan`` shape), for its graph."""
        return self.rest.get(f"/jobs/{self.job_id}/plan").get("plan") or {}

    def checkpoints(self) -> dict:
        """Flink's checkpoint statistics of the job (counts, latest, history)."""
        return self.rest.get(f"/jobs/{self.job_id}/checkpoints")

    def cancel(self) -> None:
        self.rest.patch(f"/jobs/{self.job_id}?mode=cancel")

    def savepoint(self, target: str | None = None, stop: bool = False, timeout: float = 300.0,
                  drain: bool = False) -> str:
        """Take a savepoint (and with ``stop`` end the job after it, Flink's stop; ``drain`` first fires
        every window with a final watermark of +infinity); returns its location."""
        path, body = ((f"/jobs/{self.job_id}/stop", {"targetDirectory": target, "drain": drain}) if stop else
                      (f"/jobs/{self.job_id}/savepoints", {"target-directory": target, "cancel-job": False}))
        request_id = self.rest.post(path, body)["request-id"]
        return self.rest.await_operation(f"/jobs/{self.job_id}/savepoints/{request_id}",
                                         f"savepoint of job {self.job_id}", timeout)["location"]

    def checkpoint(self, full: bool = False, timeout: float = 300.0) -> int:
        """Take a checkpoint now, besides the periodic ones (Flink 1.19+); returns its id."""
        request_id = self.rest.post(f"/jobs/{self.job_id}/checkpoints",
                                    {"checkpointType": "FULL" if full else "CONFIGURED"})["request-id"]
        return self.rest.await_operation(f"/jobs/{self.job_id}/checkpoints/{request_id}",
                                         f"checkpoint of job {self.job_id}", timeout)["checkpointId"]

    # -- push sources (runtime.connectors.push) ----------------------------------------------
    def push(self, source: str, rows) -> dict:
        """Append ``rows`` (a pandas DataFrame, a pyarrow Table or a list of dicts) to the push source
        named ``source`` (or with that operator id). The JobManager checks them against the schema and
        takes all or none: rows that do not fit raise ClusterError (status 400) naming the field.
        Returns the source, the rows taken and their offsets."""
        body: dict[str, Any]
        if isinstance(rows, (list, tuple)):  # as JSON, so the JobManager checks each row's fields
            body = {"rows": list(rows)}
        else:
            body = {"arrow": table_to_b64(table_of(rows, source))}
        body["push_id"] = secrets.token_hex(8)  # a retry across a failover is then taken once
        return self.rest.post(self._source_path(source, "rows"), body)

    def close_source(self, source: str) -> dict:
        """No more rows for this push source: once its subtasks read what it has, they finish."""
        return self.rest.post(self._source_path(source, "close"))

    def push_sources(self) -> list[dict]:
        """The job's push sources: id, name, schema, rows pushed so far and whether closed."""
        return self.rest.get(f"/jobs/{self.job_id}/sources")["sources"]

    def _source_path(self, source: str, action: str) -> str:
        return f"/jobs/{self.job_id}/sources/{urllib.parse.quote(source, safe='')}/{action}"

    def wait(self, timeout: float | None = None, poll: float = 0.2) -> str:
        """Block until the job is terminal; raises JobFailed with the remote traceback if it failed."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            state = self.status()
            if state in TERMINAL_JOB_STATES:
                if state == "FAILED":
                    raise JobFailed(self.job_id, self.exceptions().get("root-exception") or "no cause recorded")
                return state
            if deadline is not None and time.monotonic() > deadline:
                raise TimeoutError(f"job {self.job_id} still {state} after {timeout} s")
            time.sleep(poll)

    def fetch(self, offset: int | None = None, limit: int = 100_000) -> tuple[pa.Table, int, bool, str]:
        """One page of collected rows from ``offset``: (rows, next offset, finished, job state)."""
        start = self._offset if offset is None else offset
        payload, headers = self.rest.request(
            "GET", f"/jobs/{self.job_id}/results?format=arrow&offset={start}&limit={limit}", raw=True)
        headers = {k.lower(): v for k, v in headers.items()}
        table = ipc.open_stream(io.BytesIO(payload)).read_all()
        nxt = int(headers.get("x-next-offset", start))
        if offset is None:
            self._offset = nxt
        return table, nxt, headers.get("x-finished") == "true", headers.get("x-job-state", "")

    def iter_results(self, poll: float = 0.2, offset: int | None = None) -> Iterator[pa.Table]:
        """Collected rows as they arrive, until the job ends (raises JobFailed if it fails); from
        ``offset`` when given, else from where this client's last read stopped."""
        while True:
            table, nxt, finished, state = self.fetch(offset)
            offset = None if offset is None else nxt
            if table.num_rows:
                yield table
            if finished:
                if state == "FAILED":
                    self.wait()
                return
            if not table.num_rows:
                time.sleep(poll)

    def results(self, timeout: float | None = None) -> pa.Table:
        """All collected rows, after the job finished (every call, whatever was read before)."""
        self.wait(timeout)
        pieces = list(self.iter_results(offset=0))
        if not pieces:
            table, _, _, _ = self.fetch(0, 0)
            return table
        return pa.concat_tables(pieces, promote_options="default")
