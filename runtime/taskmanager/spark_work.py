"""Which Spark stages each subtask of this TaskManager ran: the recording behind a subtask's drill-down.

Tagging: a task's blocking steps run in the TaskManager's pool (Task.run_blocking), and before each the pool
thread is tagged with the subtask (:meth:`SparkWorkRecorder.enter`): Spark's job group (its attempt id) and
job description (``Count (2/4) [<attempt id>]``) are local properties of the thread's JVM thread (PySpark
pins each Python thread to one), carried by every job the step starts, and shown by the Spark UI. A thread
is tagged again only when it runs another subtask's step: two round trips then, none otherwise.

Reading: the Spark driver keeps its recent jobs and stages in its status store (what its UI and REST API
read; runtime.taskmanager.spark_session keeps RETAINED_STAGES of them with the UI off). The recorder reads the
stages, and their operation graphs, from the lowest id it has not seen ended, each list as JSON written by
the driver's Jackson (four round trips in all), at most once every READ_EVERY_S while subtasks report: :meth:`take`,
called with each subtask's metrics report on the loop, starts the next read in the pool and hands the subtask
the stages read for it since its last report. A Spark Connect session's driver is not ours to read: nothing
is recorded there (its own UI shows its work). Reads and tags never fail a task: a JVM going away is logged.
"""
from __future__ import annotations

import collections
import json
import logging
import re
import threading
import time
from collections.abc import Callable
from concurrent.futures import Executor

from runtime.messages import TaskDeploymentDescriptor
from runtime.spark_stages import (EXPLAINED_OVER_S, SparkStageRecord, SparkWork, dominant, explained, plan_of,
                                  share_of, stage_record)

log = logging.getLogger(__name__)

READ_EVERY_S = 2.0  # well within what the driver keeps (RETAINED_STAGES) at a few bundles a second per subtask
RECENT = 64  # stages kept per subtask for its dominant plan (the JobManager keeps its own recent list)
HOLD_S = 120.0  # a stage that has not ended after this long is given up on (its job was killed)
FORGET_S = 60.0  # a subtask that has not reported for this long has ended: its figures go
TAG = re.compile(r"\[([0-9a-f]{16,64})\]$")
STAGES = "org.apache.spark.status.StageDataWrapper"
GRAPHS = "org.apache.spark.status.RDDOperationGraphWrapper"


def description(label: str, attempt_id: str) -> str:
    """The job description a subtask's Spark jobs carry (what the Spark UI lists them by)."""
    return f"{label} [{attempt_id}]"


def attempt_of(job_description: str | None) -> str | None:
    found = TAG.search(job_description or "")
    return found.group(1) if found else None


class _Subtask:
    """What the recorder holds for one subtask attempt."""

    def __init__(self):
        self.new: list[SparkStageRecord] = []
        self.recent: collections.deque[SparkStageRecord] = collections.deque(maxlen=RECENT)
        self.total_stages = 0
        self.total_ms = 0
        self.taken = time.monotonic()
        # (when, busy ms, stage ms, driver ms), each so far
        self.history: collections.deque[tuple[float, int, int, int]] = collections.deque()

    def note(self, busy_ms: int, driver_ms: int) -> tuple[float, float]:
        """Its stage time's and its driver time's shares of its busy time over the last EXPLAINED_OVER_S,
        ``busy_ms`` and ``driver_ms`` its busy time and its driver time outside stages now."""
        now = time.monotonic()
        self.history.append((now, busy_ms, self.total_ms, driver_ms))
        while len(self.history) > 2 and now - self.history[1][0] >= EXPLAINED_OVER_S:
            self.history.popleft()
        return explained(self.history), share_of(self.history, 3)


class SparkWorkRecorder:
    """One TaskManager's recorder: tags pool threads (any thread) and reads the status store (a pool thread)."""

    def __init__(self, current_session: Callable[[], object | None], executor: Executor):
        self.current_session = current_session  # the keeper's current(): never starts a session
        self.executor = executor
        self.read_s = 0.0  # time spent reading, in all: the recorder's own cost
        self.reads = 0
        self._local = threading.local()
        self._lock = threading.Lock()
        self._subtasks: dict[str, _Subtask] = {}
        self._session: object | None = None
        self._handles: tuple | None = None  # the session's Jackson mapper, status store and its stage and graph classes
        self._views: tuple | None = None  # the store's views over them, once it holds stages
        self._cursor = 0  # the lowest stage id not yet read as ended
        self._held: dict[tuple[int, int], float] = {}  # ended stages read above the cursor, and when
        self._reading = False
        self._last_read = 0.0
        self._failed = False  # a read failed already: later failures are logged at debug level

    # -- tagging (pool threads) ----------------------------------------------------------------
    def enter(self, tdd: TaskDeploymentDescriptor) -> None:
        """Tag this thread's Spark jobs as the subtask's (``tdd``: its deployment), unless it already is."""
        attempt_id, label = tdd.attempt_id, f"{tdd.task_name} ({tdd.subtask_index + 1}/{tdd.parallelism})"
        session = self.current_session()
        context = getattr(session, "sparkContext", None) if session is not None else None
        if context is None or getattr(self._local, "tag", None) == (id(session), attempt_id):
            return
        try:
            context.setLocalProperty("spark.jobGroup.id", attempt_id)
            context.setLocalProperty("spark.job.description", description(label, attempt_id))
            self._local.tag = (id(session), attempt_id)
        except Exception as err:  # noqa: BLE001 - a JVM going away; the step itself will say so
            log.debug("could not tag the Spark jobs of %s: %s", attempt_id, err)

    # -- reports (the loop) --------------------------------------------------------------------
    def take(self, attempt_id: str, loop=None, busy_ms: int = 0, driver_ms: int = 0) -> SparkWork:
        """The stages read for ``attempt_id`` since its last report, and its totals (``busy_ms``: its busy time
        so far, which its stage time is held against; ``driver_ms``: its time on Spark's driver outside stages so
        far, held against it too); on ``loop``, starts the next read when one is due."""
        if loop is not None:
            self._read_when_due(loop)
        with self._lock:
            sub = self._subtasks.setdefault(attempt_id, _Subtask())
            sub.taken = time.monotonic()
            new, sub.new = sub.new, []
            top = dominant(sub.recent)
            stage_share, driver_share = sub.note(busy_ms, driver_ms)
            return SparkWork(new, sub.total_stages, sub.total_ms, top[0] if top else None,
                             round(top[1], 3) if top else 0.0, round(stage_share, 3), round(driver_share, 3))

    def _read_when_due(self, loop) -> None:
        now = time.monotonic()
        if self._reading or now - self._last_read < READ_EVERY_S:
            return
        self._reading, self._last_read = True, now
        loop.run_in_executor(self.executor, self._read_safely)

    # -- reading (a pool thread) ---------------------------------------------------------------
    def _read_safely(self) -> None:
        t0 = time.monotonic()
        try:
            self.read()
        except Exception as err:  # noqa: BLE001 - a JVM going away between two reads
            (log.debug if self._failed else log.warning)("could not read Spark's stages: %s", err)
            self._failed = True
        finally:
            self.read_s += time.monotonic() - t0
            self.reads += 1
            self._reading = False

    def read(self) -> None:
        """Read the stages that ended since the last read and give each to its subtask (blocks: py4j)."""
        session = self.current_session()
        context = getattr(session, "sparkContext", None) if session is not None else None
        if context is None:
            return
        if session is not self._session:  # a new driver numbers its stages from 0 again
            self._session, self._handles, self._views, self._cursor, self._held = session, _handles(context), None, 0, {}
        stages, graphs = self._fetch()
        self._record(stages, graphs)

    def _fetch(self) -> tuple[list[dict], dict[int, dict]]:
        assert self._handles is not None  # set with the session in read()
        mapper, store, stage_class, graph_class = self._handles
        if self._views is None:  # a view made before the store held any stage stays empty: made again until one does
            self._views = (store.view(stage_class).index("stageId"), store.view(graph_class))
        stage_view, graph_view = self._views  # a view's first() sets where it starts, and returns the view
        stages = json.loads(mapper.writeValueAsString(stage_view.first(self._cursor)))
        if not stages:
            self._views = None
            return [], {}
        graphs = json.loads(mapper.writeValueAsString(graph_view.first(self._cursor)))
        return stages, {int(g["stageId"]): g for g in graphs}

    def _record(self, stages: list[dict], graphs: dict[int, dict]) -> None:
        now, unended, top = time.monotonic(), [], self._cursor
        with self._lock:
            for wrapper in stages:
                info = wrapper.get("info") or {}
                key = (int(info.get("stageId", -1)), int(info.get("attemptId") or 0))
                top = max(top, key[0] + 1)
                if key in self._held:
                    continue
                record = stage_record(info, wrapper.get("jobIds") or [], plan_of(graphs.get(key[0]) or {}))
                if record is None and _young(info, HOLD_S):
                    unended.append(key[0])
                elif record is not None:
                    self._held[key] = now
                    self._give(attempt_of(info.get("description")), record)
            self._cursor = min(unended) if unended else top
            self._held = {k: t for k, t in self._held.items() if k[0] >= self._cursor}
            self._subtasks = {a: s for a, s in self._subtasks.items() if now - s.taken < FORGET_S}

    def _give(self, attempt_id: str | None, record: SparkStageRecord) -> None:
        if attempt_id is None or record.status == "SKIPPED":
            return  # a job no subtask started (the TaskManager's warm-up), or a stage whose output was at hand
        sub = self._subtasks.setdefault(attempt_id, _Subtask())
        sub.new.append(record)
        del sub.new[:-RECENT]
        sub.recent.append(record)
        sub.total_stages += 1
        sub.total_ms += record.duration_ms


def _young(info: dict, hold_s: float) -> bool:
    """Whether a stage that has not ended is recent enough to wait for (submission time in epoch ms)."""
    submitted = info.get("submissionTime")
    return submitted is None or time.time() - int(submitted) / 1000.0 < hold_s


def _handles(context) -> tuple:
    """A Jackson mapper with Scala support (Spark's REST API writes its JSON with one), the driver's status store
    and the classes of its stages and their operation graphs: looked up once per session. Views over them are
    kept while the store holds stages, so that a read is four round trips to the driver."""
    jvm = context._jvm
    scala = getattr(jvm.com.fasterxml.jackson.module.scala, "DefaultScalaModule$").__getattr__("MODULE$")
    loader = jvm.java.lang.Thread.currentThread().getContextClassLoader()
    return (jvm.com.fasterxml.jackson.databind.ObjectMapper().registerModule(scala), context._jsc.sc().statusStore().store(),
            jvm.java.lang.Class.forName(STAGES, True, loader), jvm.java.lang.Class.forName(GRAPHS, True, loader))
