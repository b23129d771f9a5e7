"""The savepoint browser (Flinkbench's own routes): savepoints and retained checkpoints across jobs, each
operator's state, and how one fits a job about to start from it."""
from __future__ import annotations

from runtime.jobmanager.rest.fields import F, RawJson, message


@message
class OperatorStateInfo:
    operator_id: str = F("operator", doc="the operator's id (its uid when the job set one)")
    kinds: list[str] = F("kinds", doc="keyed state, source offsets, sink staging")
    subtasks: int = F("subtasks", doc="subtasks of the old job that held state of it")
    bytes: int = F("bytes", doc="bytes of its keyed state")
    rows: int | None = F("rows", default=None, omit_none=True, doc="keyed state rows (details only)")
    keys: int | None = F("keys", default=None, omit_none=True, doc="distinct keys of its keyed state (details only)")


@message
class SavepointEntry:
    path: str = F("path", doc="the directory holding _metadata: what --from-savepoint takes")
    kind: str = F("kind", doc="savepoint or checkpoint (a retained one)")
    checkpoint_id: int = F("id")
    job_id: str = F("job-id")
    job_name: str | None = F("job-name", doc="known while its job runs or from its archive")
    timestamp: int = F("timestamp", doc="when it was taken (ms since the epoch)")
    max_parallelism: int | None = F("maxParallelism")
    parallelism: int = F("parallelism", doc="the most subtasks any of its operators had")
    size: int = F("size", doc="bytes of state")
    operators: dict[str, int] = F("operators", doc="every operator of the job that took it, with its subtasks")
    state: list[OperatorStateInfo] = F("state", doc="the operators holding state in it")


@message
class SavepointsList:
    directories: list[str] = F("directories", doc="where it looked")
    savepoints: list[SavepointEntry] = F("savepoints", doc="newest first")


@message
class CompatibilityRequestBody:
    path: str = F("path")
    job_graph: RawJson | None = F("job_graph", default=None,
                                  doc="the job about to start (the JSON form of runtime.jobgraph.JobGraph)")
    job_id: str | None = F("job_id", default=None, doc="or: the graph of this job, running or archived")
    allow_non_restored_state: bool = F("allowNonRestoredState", default=False)


@message
class RescaledOperator:
    operator_id: str = F("operator")
    old: int = F("from")
    new: int = F("to")


@message
class CompatibilityInfo:
    path: str = F("path")
    compatible: bool = F("compatible", doc="the job may start from it as submitted")
    needs_allow_non_restored_state: bool = F("needsAllowNonRestoredState",
                                             doc="some of its state has no operator in the job")
    matched: list[str] = F("matched", doc="operators whose state is restored")
    dropped: list[str] = F("dropped", doc="operators of the savepoint the job lacks: their state would be dropped")
    new: list[str] = F("new", doc="the job's operators with no state in it (they start empty)")
    rescaled: list[RescaledOperator] = F("rescaled")
    problems: list[str] = F("problems", doc="why it would be refused")


@message
class ResumeRequestBody:
    path: str = F("path")
    allow_non_restored_state: bool = F("allowNonRestoredState", default=False)
