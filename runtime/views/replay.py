"""A recording (runtime.views.recording) played back into a ClusterModel, so that the live views show the
job again as it ran (its slots, tasks, checkpoints, a TaskManager lost and the restart) with no cluster,
no Spark and no Java: nothing here imports PySpark.

:class:`Replay` applies each line at its recorded time divided by ``speed`` on a thread of its own, and runs
the model on the recording's clock (the views' "now" is the time the recording has reached, so checkpoint
spans and watermark lags read as they did). :class:`RecordedJob` stands for the job where a view would ask
a JobManager: rows by offset, the plan, the root cause of a failure; cancelling it stops the replay.
"""
from __future__ import annotations

import threading
import time

import pyarrow as pa

from runtime.views.graph import plan_from_json
from runtime.views.model import ClusterModel
from runtime.views.recording import Recording


class RecordedJob:
    """The replayed job, answering the calls a job view makes of a JobClient."""

    def __init__(self, recording: Recording, model: ClusterModel, stop=lambda: None):
        self.job_id = recording.job_id
        self.model = model
        self._stop = stop
        self._plan: dict = next((line["plan"] for line in recording.lines if line["kind"] == "plan"), {})
        self._lock = threading.Lock()
        self._tables: list[pa.Table] = []
        self._all: pa.Table | None = None
        self.ended = threading.Event()
        self.state = ""
        self.failure = ""

    # -- fed by the replay --------------------------------------------------------------------
    def add_rows(self, table: pa.Table) -> None:
        with self._lock:
            self._tables.append(table)
            self._all = None

    def end(self, state: str, failure: str = "") -> None:
        self.state, self.failure = state, failure
        self.ended.set()

    # -- what a view calls --------------------------------------------------------------------
    def fetch(self, offset: int = 0, limit: int = 100_000) -> tuple[pa.Table, int, bool, str]:
        """Rows from ``offset`` that the replay has reached: (rows, next offset, finished, job state)."""
        with self._lock:
            if self._all is None and self._tables:
                self._all = pa.concat_tables(self._tables, promote_options="default")
            table = self._all
        if table is None:  # no columns known yet (a table without columns slices into phantom rows)
            return pa.table({}), offset, self.ended.is_set(), self.state or self.modelled_state()
        rows = table.slice(offset, limit)
        nxt = offset + rows.num_rows
        return rows, nxt, self.ended.is_set() and nxt >= table.num_rows, self.state or self.modelled_state()

    def modelled_state(self) -> str:
        with self.model.lock:
            job = self.model.jobs.get(self.job_id)
            return job.state if job else "CREATED"

    def plan(self) -> dict:
        return self._plan

    def exceptions(self) -> dict:
        return {"root-exception": self.failure or None}

    def cancel(self) -> None:
        """Stop the replay where it is."""
        self._stop()


class Replay:
    """Plays ``recording`` into ``model`` on a thread, ``speed`` times as fast as it was recorded."""

    def __init__(self, recording: Recording, model: ClusterModel, speed: float = 1.0):
        if not speed > 0:
            raise ValueError(f"the speed must be above 0, got {speed}")
        self.recording = recording
        self.model = model
        self.speed = float(speed)
        self.job = RecordedJob(recording, model, stop=self.stop)
        self.finished = threading.Event()
        self.stopped_early = False
        self._stop = threading.Event()
        self._started_at = 0.0
        self._reached = 0.0  # the recording's time the replay has got to
        self._thread = threading.Thread(target=self._run, name=f"flinkbench-replay-{recording.job_id[:8]}",
                                        daemon=True)

    def start(self) -> Replay:
        start = float(self.recording.header["started"])
        self.model.clock = lambda: start + self._reached
        self.model.set_connection("connected", "", f"replaying {self.recording.path}", label=self.label())
        self._started_at = time.monotonic()
        self._thread.start()
        return self

    def label(self) -> str:
        return f"replay of {self.recording.path} ({self.speed:g}\u00d7)"

    def stop(self) -> None:
        self._stop.set()

    def wait(self, timeout: float | None = None) -> bool:
        return self.finished.wait(timeout)

    def _run(self) -> None:
        try:
            for line in self.recording.lines:
                due = self._started_at + line["t"] / self.speed
                while not self._stop.is_set() and time.monotonic() < due:
                    self._reached = (time.monotonic() - self._started_at) * self.speed
                    self._stop.wait(min(0.25, max(0.0, due - time.monotonic())))
                if self._stop.is_set():
                    self.stopped_early = True
                    break
                self._reached = line["t"]
                self._apply(line)
        finally:
            if not self.job.ended.is_set():
                self.job.end(self.job.modelled_state())
            self.model.set_connection("connected", "", "the replay ended", label=self.label() + ", ended")
            self.finished.set()

    def _apply(self, line: dict) -> None:
        kind = line["kind"]
        if kind == "message":
            message = line["message"]
            if message["type"] == "ClusterSnapshot":
                self.model.reset(message)
            else:
                self.model.apply(message)
        elif kind == "job":
            self.model.seed_job(line["details"])
        elif kind == "checkpoints":
            self.model.seed_checkpoints(self.job.job_id, line["stats"])
        elif kind == "plan":
            self.model.set_plan(self.job.job_id, plan_from_json(line["plan"]))
        elif kind == "rows":
            self.job.add_rows(line["table"])
        elif kind == "end":
            self.job.end(line["state"], line.get("failure") or "")
