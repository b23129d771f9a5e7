"""The Spark stages a subtask's bundles ran: what a TaskManager reports of them and how they are judged.

Each bundle of a subtask runs one or more Spark jobs, each of a few stages (a shuffle splits a plan in two).
The TaskManager reads them from its Spark driver's status store (runtime.taskmanager.spark_work) as
Spark's own REST API describes them (``StageData``: ``submissionTime``, ``completionTime``,
``executorRunTime``, ``shuffleReadBytes``...) and sends each subtask's new ones with its metrics
(:class:`SparkWork`); the JobManager keeps the recent ones per subtask for its drill-down. Pure: no Spark.

A stage's *plan* names what it ran: the scopes of Spark's operation graph for it, in order
(``WholeStageCodegen (1) > Exchange``), the same boxes the Spark UI draws. Bundles of one subtask run the
same plans over and over, so the time per plan tells which part of the subtask's work dominates.

Stages are not all of a subtask's busy time (:func:`busy_parts`). Before its action runs any stage, Spark's
driver analyses, optimises and plans the query, and under Spark's defaults its optimizer computes a projection of
a bundle's own rows itself (``ConvertToLocalRelation``: the rows came from Python, so they are a local relation):
a downstream task's expressions then run on the driver, interpreted, outside any stage. Measured on 2 cores (load
16 to 18) with 500-row bundles of the drill-down test's hashing projection: 31-36 s of a 31-36 s action were the
optimizer's (99 %, nearly all of it that one rule), its stage took milliseconds; with the rule excluded the same
action took 3-4 s, nearly all in its stage. So the drill-down adds, beside its stages, the driver's own time
(the task's ``spark_driver`` phase, from Spark's QueryPlanningTracker) and the TaskManager's own work (its other
phases), each measured on its own, and the hint names whichever part dominates.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from runtime.codec import wire

DOMINANT_SHARE = 0.5  # a plan taking at least this share of a subtask's recent stage time dominates it
EXPLAINED_OVER_S = 60.0  # how far back a subtask's stage time is held against its busy time
PLAN_SEPARATOR = " > "
ACTION_PHASE = "spark_action"  # the task phase that holds a bundle's Spark plan and action, stages and driver included
DRIVER_PHASE = "spark_driver"  # the part of ACTION_PHASE Spark's driver spent analysing, optimising, planning
NOT_BUSY_PHASES = ("input_wait",)  # a buffer waits in the gate while the task works on others: not its busy time
#: The parts a subtask's busy time is split into, in the order shown, with what each holds.
PARTS = {"stages": "Spark stages (from Spark's status store)",
         "driver": "Spark's driver outside any stage: analysis, optimizer (ConvertToLocalRelation computes a bundle's "
                   "projection there), planning (from Spark's QueryPlanningTracker)",
         "transfer": "the rest of the Spark actions: Arrow into and out of Spark, calls to the JVM",
         "taskmanager": "the TaskManager's own work: stateful operators, exchange, sinks, waiting for a pool "
                        "thread (its other phases)"}


@wire
@dataclass
class SparkStageRecord:
    """One stage attempt a subtask's bundle ran, as Spark's status store described it once it ended."""
    stage_id: int
    attempt: int
    job_ids: list[int]
    plan: str  # its operation graph's scopes in order, e.g. "WholeStageCodegen (1) > Exchange"
    status: str  # COMPLETE, FAILED or SKIPPED
    submitted_ms: int  # epoch ms
    duration_ms: int  # submission to completion (wall time)
    tasks: int
    failed_tasks: int = 0
    executor_run_ms: int = 0  # summed over its tasks
    executor_cpu_ms: int = 0
    input_bytes: int = 0
    shuffle_read_bytes: int = 0
    shuffle_write_bytes: int = 0
    memory_spilled_bytes: int = 0
    disk_spilled_bytes: int = 0


@wire
@dataclass
class SparkWork:
    """A subtask's Spark work since its previous report (``stages``) and in all (the totals)."""
    stages: list[SparkStageRecord] = field(default_factory=list)
    total_stages: int = 0
    total_stage_ms: int = 0  # the durations of all its stages so far, added up
    dominant_plan: str | None = None  # the plan with DOMINANT_SHARE or more of its recent stage time
    dominant_share: float = 0.0
    explained: float = 0.0  # its stage time over its busy time, in the last EXPLAINED_OVER_S (from its start before)
    driver_share: float = 0.0  # its driver time outside stages (DRIVER_PHASE) over its busy time, over the same span


def stage_record(info: Mapping, job_ids: Iterable[int], plan: str) -> SparkStageRecord | None:
    """A record of Spark's ``StageData`` (its JSON form), or None while the stage has not ended."""
    status = str(info.get("status") or "")
    if status not in ("COMPLETE", "FAILED", "SKIPPED"):
        return None
    submitted = int(info.get("submissionTime") or 0)
    completed = int(info.get("completionTime") or submitted)
    return SparkStageRecord(
        stage_id=int(info["stageId"]), attempt=int(info.get("attemptId") or 0), job_ids=sorted(int(j) for j in job_ids),
        plan=plan, status=status, submitted_ms=submitted, duration_ms=max(0, completed - submitted) if submitted else 0,
        tasks=int(info.get("numTasks") or 0), failed_tasks=int(info.get("numFailedTasks") or 0),
        executor_run_ms=int(info.get("executorRunTime") or 0),
        executor_cpu_ms=int(info.get("executorCpuTime") or 0) // 1_000_000,  # Spark counts CPU time in ns
        input_bytes=int(info.get("inputBytes") or 0), shuffle_read_bytes=int(info.get("shuffleReadBytes") or 0),
        shuffle_write_bytes=int(info.get("shuffleWriteBytes") or 0),
        memory_spilled_bytes=int(info.get("memoryBytesSpilled") or 0),
        disk_spilled_bytes=int(info.get("diskBytesSpilled") or 0))


def plan_of(graph: Mapping) -> str:
    """The plan of a stage from its operation graph (Spark's ``RDDOperationGraphWrapper`` as JSON): the names
    of its top-level scopes in order, e.g. ``Exchange > WholeStageCodegen (2) > mapPartitionsInternal``."""
    root = graph.get("rootCluster") or {}
    names = [str(c.get("name") or "") for c in root.get("childClusters") or [] if c.get("name")]
    if not names:  # RDDs outside any SQL scope (rare here): their own names
        names = [str(n.get("name") or "") for n in root.get("childNodes") or [] if n.get("name")]
    return PLAN_SEPARATOR.join(names) or "stage"


def time_by_plan(stages: Iterable[SparkStageRecord]) -> dict[str, int]:
    """Milliseconds of stage time per plan, largest first."""
    totals: dict[str, int] = {}
    for s in stages:
        totals[s.plan] = totals.get(s.plan, 0) + s.duration_ms
    return dict(sorted(totals.items(), key=lambda kv: -kv[1]))


def dominant(stages: Iterable[SparkStageRecord]) -> tuple[str, float] | None:
    """The plan that takes DOMINANT_SHARE or more of these stages' time, with its share; None if none does."""
    totals = time_by_plan(stages)
    whole = sum(totals.values())
    if not whole:
        return None
    plan, ms = next(iter(totals.items()))
    return (plan, ms / whole) if ms / whole >= DOMINANT_SHARE else None


def explained(history: Sequence[tuple[float, int, int]]) -> float:
    """The share of its busy time a subtask's stages took, between the first and the last of ``history``'s
    (when, busy ms, stage ms so far): 0 before any busy time. Any later item of the tuples (driver ms so far)
    is left alone; :func:`share_of` reads the others."""
    return share_of(history, 2)


def share_of(history: Sequence[tuple], index: int) -> float:
    """The share of its busy time (item 1) that item ``index`` of ``history``'s tuples grew by, first to last."""
    if len(history) < 2 or history[-1][1] <= history[0][1]:
        return 0.0
    return (history[-1][index] - history[0][index]) / (history[-1][1] - history[0][1])


def slowest_first(stages: Iterable[SparkStageRecord]) -> list[SparkStageRecord]:
    return sorted(stages, key=lambda s: (-s.duration_ms, -s.stage_id))


def busy_parts(stage_ms: int, phases: Mapping[str, float]) -> dict[str, int]:
    """A subtask's busy time in PARTS (ms), from its stage time and its phase times (seconds, since it started).

    ``stages``, ``driver`` and ``taskmanager`` are each measured on their own (Spark's status store, Spark's
    planning tracker, the TaskManager's timers); ``transfer`` is what the Spark actions took beyond the first two."""
    action_ms = round(phases.get(ACTION_PHASE, 0.0) * 1000)
    driver_ms = round(phases.get(DRIVER_PHASE, 0.0) * 1000)
    own = sum(v for k, v in phases.items() if k not in (ACTION_PHASE, DRIVER_PHASE, *NOT_BUSY_PHASES))
    return {"stages": stage_ms, "driver": driver_ms, "transfer": max(0, action_ms - stage_ms - driver_ms),
            "taskmanager": round(own * 1000)}


def measured_share(parts: Mapping[str, int], busy_ms: int) -> float:
    """How much of ``busy_ms`` the independently measured parts (all but ``transfer``) account for."""
    return (parts["stages"] + parts["driver"] + parts["taskmanager"]) / busy_ms if busy_ms > 0 else 0.0


def dominant_part(parts: Mapping[str, int]) -> str | None:
    """The part holding DOMINANT_SHARE or more of the parts' time together, or None."""
    whole = sum(parts.values())
    top = max(parts, key=lambda k: parts[k], default=None)
    return top if top is not None and whole and parts[top] / whole >= DOMINANT_SHARE else None
