"""A job's event stream recorded to a file, to be replayed into the same live views without a cluster
(runtime.views.replay): a teacher shows a failover on a laptop with no Java.

The file is JSON lines. The first is a header (format, version, job id and name, the wall-clock start,
how the job was shown); every later line has ``t`` (seconds since the start) and a ``kind``:

- ``message``: a ClusterSnapshot or an event, exactly as the JobManager's ``/events`` stream sent it;
- ``job`` and ``checkpoints``: ``GET /jobs/<id>`` and ``GET /jobs/<id>/checkpoints`` when recording
  began (a job recorded midway keeps its history);
- ``plan``: the job's tasks and exchanges, for the graph;
- ``rows``: collected rows from ``offset`` on, as base64 Arrow IPC (the REST API's encoding);
- ``end``: the job's last state and, if it failed, the root cause.

Only the recorded job's events are kept: other jobs' slots are kept as taken by "another job", their
other events left out. :func:`read` checks every line before anything is shown and names the line
that is wrong.
"""
from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from runtime.arrow_ipc import table_from_b64, table_to_b64
from runtime.errors import ClusterError
from runtime.views.model import ClusterModel

log = logging.getLogger(__name__)

FORMAT = "flinkbench-recording"
VERSION = 1
KINDS = ("message", "job", "checkpoints", "plan", "rows", "end")
ANOTHER_JOB = "another-job"
POLL_S = 0.3
LINGER_S = 2.0  # keep recording this long after the last row, for the job's last events
LEFT_OUT = ("TaskManagerStatusReported",)  # log lines and memory of whole TaskManagers: not the job's


class RecordingError(ValueError):
    """A recording that cannot be replayed; the message names the file and the line."""


@dataclass
class Recording:
    path: str
    header: dict
    lines: list[dict] = field(default_factory=list)  # every line after the header, checked, rows decoded

    @property
    def job_id(self) -> str:
        return self.header["job_id"]

    @property
    def name(self) -> str:
        return self.header.get("job_name") or self.job_id

    @property
    def duration(self) -> float:
        return self.lines[-1]["t"] if self.lines else 0.0

    @property
    def complete(self) -> bool:
        return bool(self.lines) and self.lines[-1]["kind"] == "end"


# -- reading ----------------------------------------------------------------------------------
def read(path: str | Path) -> Recording:
    """The recording at ``path``, every line checked; RecordingError names the first line that is wrong."""
    try:
        text = Path(path).read_text()
    except OSError as err:
        raise RecordingError(f"cannot read the recording {path}: {err.strerror or err}") from None
    lines = text.splitlines()
    if not lines:
        raise RecordingError(f"{path} is empty: a recording starts with a header line")
    header = _object(path, 1, lines[0])
    _check_header(path, header)
    recording = Recording(str(path), header)
    last_t = 0.0
    for number, raw in enumerate(lines[1:], start=2):
        if not raw.strip():
            continue
        line = _object(path, number, raw)
        _check_line(path, number, line, last_t)
        last_t = line["t"]
        recording.lines.append(line)
    return recording


def _object(path, number: int, raw: str) -> dict:
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as err:
        raise RecordingError(f"{path}, line {number}: not JSON ({err.msg} at column {err.colno})") from None
    if not isinstance(value, dict):
        raise RecordingError(f"{path}, line {number}: a JSON object was expected, got {type(value).__name__}")
    return value


def _check_header(path, header: dict) -> None:
    if header.get("format") != FORMAT:
        raise RecordingError(f"{path}, line 1: not a Flinkbench recording (the header's format is "
                             f"{header.get('format')!r}, expected {FORMAT!r})")
    version = header.get("version")
    if not isinstance(version, int) or version < 1:
        raise RecordingError(f"{path}, line 1: the header's version is {version!r}, expected a whole number")
    if version > VERSION:
        raise RecordingError(f"{path}, line 1: format version {version} is newer than this Flinkbench reads "
                             f"({VERSION}); replay it with a newer Flinkbench")
    for key in ("job_id", "job_name", "started"):
        if key not in header:
            raise RecordingError(f"{path}, line 1: the header has no {key!r}")


def _check_line(path, number: int, line: dict, last_t: float) -> None:
    where = f"{path}, line {number}"
    t, kind = line.get("t"), line.get("kind")
    if not isinstance(t, (int, float)) or isinstance(t, bool) or t < 0:
        raise RecordingError(f"{where}: 't' must be seconds since the start, got {t!r}")
    if t < last_t:
        raise RecordingError(f"{where}: 't' goes back in time ({t} after {last_t})")
    if kind not in KINDS:
        raise RecordingError(f"{where}: unknown kind {kind!r} (one of {', '.join(KINDS)})")
    body = {"message": "message", "job": "details", "checkpoints": "stats", "plan": "plan"}.get(kind)
    if body and not isinstance(line.get(body), dict):
        raise RecordingError(f"{where}: a {kind!r} line needs an object {body!r}")
    if kind == "message" and not isinstance(line["message"].get("type"), str):
        raise RecordingError(f"{where}: the message has no 'type'")
    if kind == "rows":
        try:
            line["table"] = table_from_b64(line["arrow"])
        except Exception as err:  # noqa: BLE001 - base64, Arrow: any undecodable value is the file's fault
            raise RecordingError(f"{where}: the rows are not base64 Arrow IPC ({type(err).__name__}: {err})") from None
    if kind == "end" and not isinstance(line.get("state"), str):
        raise RecordingError(f"{where}: an 'end' line needs the job's 'state'")


# -- writing ----------------------------------------------------------------------------------
def only_job(message: dict, job_id: str) -> dict | None:
    """The message as a recording of ``job_id`` keeps it: None to leave it out, other jobs' slots anonymous."""
    kind = message.get("type")
    if kind == "ClusterSnapshot":
        out = dict(message, jobs=[j for j in message.get("jobs", []) if (j.get("jid") or j.get("id")) == job_id])
        out["taskmanagers"] = [dict(tm, slots=[_anonymous_slot(s, job_id) for s in tm.get("slots", [])])
                               for tm in message.get("taskmanagers", [])]
        return out
    if kind in LEFT_OUT:
        return None
    owner = message.get("job_id")
    if owner is None or owner == job_id:
        return message
    if kind in ("SlotAllocated", "SlotFreed"):
        return dict(message, job_id=ANOTHER_JOB, job_name="another job")
    return None


def _anonymous_slot(slot: dict, job_id: str) -> dict:
    if slot.get("job-id") in (None, job_id):
        return slot
    return dict(slot, **{"job-id": ANOTHER_JOB, "job-name": "another job", "tasks": []})


class Recorder:
    """Records one job: what the model takes from the event stream, the job's history and plan, and its rows.

    ``job`` is the job's JobClient (REST: details, checkpoints, plan, results); ``snapshot`` returns a fresh
    ClusterSnapshot (the state everything after it changes). Rows are read by offset on a thread of its own
    until the job ended, then the recording waits ``LINGER_S`` for the last events, writes its end and closes."""

    def __init__(self, path: str | Path, job, job_name: str, model: ClusterModel, snapshot: Callable[[], dict],
                 view: dict | None = None, linger: float = LINGER_S):
        self.path = Path(path)
        self.job = job
        self.job_name = job_name
        self.model = model
        self.snapshot = snapshot
        self.view = view or {"kind": "datastream"}
        self.linger = linger
        self.finished = threading.Event()
        self.error: str | None = None
        self._lock = threading.Lock()
        self._file = None
        self._start = 0.0
        self._seq = -1  # events the snapshot covers are not written again
        self._tap_lock = threading.Lock()
        self._pending: list[dict] | None = []  # messages that came before the snapshot was written
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"flinkbench-record-{job.job_id[:8]}", daemon=True)

    def start(self) -> Recorder:
        """Write the header and the job's state now, then record on a thread. Raises what reaching the cluster or
        writing the file raised, with the file closed."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file = self.path.open("w", buffering=1)
        self._start = time.monotonic()
        self.model.add_tap(self._tap)  # events during the snapshot's round trip wait until it is written
        try:
            self._file.write(json.dumps({"format": FORMAT, "version": VERSION, "job_id": self.job.job_id,
                                         "job_name": self.job_name, "started": time.time(),
                                         "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                                         "view": self.view}) + "\n")
            snapshot = self.snapshot()
            self._seq = int(snapshot.get("seq") or 0)
            self._write("message", message=only_job(snapshot, self.job.job_id))
            self._write("job", details=self.job.details())
            self._write_checkpoints()
        except BaseException:
            self.model.remove_tap(self._tap)
            self._close()
            raise
        with self._tap_lock:  # what came meanwhile, then everything as it comes
            for message in self._pending or []:
                self._keep(message)
            self._pending = None
        self._thread.start()
        return self

    def stop(self, wait_for_end: float = 0.0) -> None:
        """End the recording (the job may run on; the file stays replayable); with ``wait_for_end``, first give a
        job that ended that long to have its last rows and events recorded."""
        if wait_for_end and self._thread.is_alive():
            self._thread.join(wait_for_end)
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(10)

    def _write(self, kind: str, **body) -> None:
        """One line; its time taken under the lock, so that lines from the stream's and the reader's threads are
        in time order."""
        with self._lock:
            if self._file is not None:
                line = {"t": round(time.monotonic() - self._start, 3), "kind": kind, **body}
                self._file.write(json.dumps(line, default=str) + "\n")

    def _write_checkpoints(self) -> None:
        try:
            self._write("checkpoints", stats=self.job.checkpoints())
        except ClusterError as err:
            if err.status != 404:  # a job without checkpointing has none to show
                raise

    def _tap(self, message: dict) -> None:
        """On the event stream's thread: hold messages until the snapshot is written, then keep the job's."""
        with self._tap_lock:
            if self._pending is not None:
                self._pending.append(message)
            else:
                self._keep(message)

    def _keep(self, message: dict) -> None:
        """Write what belongs to the job and is not in the snapshot already."""
        seq = message.get("seq")
        if message.get("type") != "ClusterSnapshot" and seq is not None and seq <= self._seq:
            return
        kept = only_job(message, self.job.job_id)
        if kept is not None:
            self._write("message", message=kept)

    def _close(self) -> None:
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None

    def _run(self) -> None:
        state = ""
        try:
            self._write_plan()
            state = self._read_rows()
            if state == "FAILED":
                self._write("end", state=state, failure=self.job.exceptions().get("root-exception") or "")
            elif state:
                self._stop.wait(self.linger)
                self._write("end", state=state)
        except (ClusterError, OSError) as err:
            self.error = f"the recording {self.path} stopped early: {err}"
            log.warning(self.error)
        finally:
            self.model.remove_tap(self._tap)
            self._close()
            self.finished.set()

    def _write_plan(self) -> None:
        try:
            self._write("plan", plan=self.job.plan())
        except ClusterError as err:
            log.warning("recording %s without the job's plan: %s", self.path, err)

    def _read_rows(self) -> str:
        """Every collected row by offset until the job ended; returns its last state ('' when stopped first)."""
        offset, columns_known = 0, False
        while not self._stop.is_set():
            table, nxt, done, state = self.job.fetch(offset, 10_000)
            if table.num_rows or not columns_known and table.num_columns:  # the columns come first, rows or not
                self._write("rows", offset=offset, arrow=table_to_b64(table))
                columns_known = True
            offset = nxt
            if done:
                return state
            if not table.num_rows:
                self._stop.wait(POLL_S)
        return ""
