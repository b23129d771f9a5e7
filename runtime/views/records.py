"""What the views remember about each thing the event stream describes: plain records, one per
TaskManager, slot, job, subtask, checkpoint and restart. The ClusterModel (runtime.views.model)
owns them and changes them under its lock."""
from __future__ import annotations

import collections
from dataclasses import dataclass, field

from runtime.states import TERMINAL_JOB_STATES, TERMINAL_TASK_STATES  # noqa: F401 - re-exported for the views
from runtime.views.graph import PlanVertex

RATE_HISTORY = 600  # points per job (half-second buckets: five minutes)
RESTART_HISTORY = 50


@dataclass
class TaskManagerInfo:
    id: str
    host: str = ""
    slots: int = 0
    state: str = "REGISTERED"  # or LOST, or STARTING (the resource provider started it; not registered yet)
    reason: str | None = None
    pid: int | None = None
    status: dict = field(default_factory=dict)  # its latest TaskManagerStatus: memory, recent log lines


@dataclass
class SlotInfo:
    tm_id: str
    index: int
    job_id: str | None = None
    job_name: str = ""
    allocation_id: str | None = None
    tasks: list[str] = field(default_factory=list)  # as the snapshot reported them


@dataclass
class SubtaskInfo:
    job_id: str
    vertex_id: str
    task_name: str
    subtask_index: int
    state: str = "CREATED"
    attempt_number: int = 0
    tm_id: str | None = None
    slot_index: int | None = None
    error: str | None = None
    metrics: dict = field(default_factory=dict)


@dataclass
class CheckpointInfo:
    id: int
    is_savepoint: bool = False
    status: str = "IN_PROGRESS"  # COMPLETED, FAILED
    triggered_ts: float = 0.0
    ended_ts: float | None = None
    duration_s: float | None = None
    size: int | None = None
    path: str = ""
    reason: str = ""
    restored_ts: float | None = None


@dataclass
class RestartInfo:
    ts: float
    attempt: int
    cause: str
    delay_s: float = 0.0


@dataclass
class JobInfo:
    id: str
    name: str = ""
    state: str = "INITIALIZING"
    attempt: int = 0
    restarts: int = 0
    start_ts: float | None = None
    end_ts: float | None = None
    cause: str | None = None
    parallelism: int | None = None
    vertex_order: list[str] = field(default_factory=list)
    restart_log: collections.deque = field(default_factory=lambda: collections.deque(maxlen=RESTART_HISTORY))
    checkpoints: dict[int, CheckpointInfo] = field(default_factory=dict)
    rates: collections.deque = field(default_factory=lambda: collections.deque(maxlen=RATE_HISTORY))
    plan: list[PlanVertex] | None = None  # the job's tasks and exchanges, once known

    @property
    def terminal(self) -> bool:
        return self.state in TERMINAL_JOB_STATES
