"""JobGraph -> ExecutionGraph: chaining operators into tasks and expanding tasks into subtasks.

An operator is chained onto its predecessor when the edge between them is forward, both have the
same parallelism, and neither side branches: such a chain runs as one Spark plan per bundle. Each
task (ExecutionJobVertex) has ``parallelism`` subtasks (ExecutionVertex), and each subtask has a
current attempt (Execution) that a restart replaces.
"""
from __future__ import annotations

import collections
import dataclasses
import time
from dataclasses import dataclass, field

from runtime.config import Configuration
from runtime.ids import AllocationId, ExecutionAttemptId, JobId, JobVertexId, TaskManagerId
from runtime.chaining import chain_operators, vertex_id_for
from runtime.jobgraph import EdgeSpec, JobGraph, OperatorSpec
from runtime.jobmanager.gateways import AllocatedSlot
from runtime.snapshots import PlanInput, PlanNode, SubtaskSnapshot, VertexSnapshot
from runtime.messages import (InputGateDescriptor, OutputDescriptor, ProducerLocation, TaskDeploymentDescriptor,
                              TaskMetrics)
from runtime.spark_stages import SparkStageRecord
from runtime.states import ExecutionState, advance

RECENT_SPARK_STAGES = 64  # a subtask's last Spark stages, kept for its drill-down


@dataclass
class Execution:
    """One attempt of one subtask, and the slot it was given (None until scheduled)."""
    attempt_id: ExecutionAttemptId
    attempt_number: int
    subtask_index: int = 0
    state: ExecutionState = ExecutionState.CREATED
    slot: AllocatedSlot | None = None
    error: str | None = None
    state_times: dict[str, float] = field(default_factory=dict)
    metrics: TaskMetrics | None = None  # the latest the TaskManager reported
    spark_stages: collections.deque[SparkStageRecord] = field(
        default_factory=lambda: collections.deque(maxlen=RECENT_SPARK_STAGES))

    def note_metrics(self, report: TaskMetrics) -> TaskMetrics:
        """Keep ``report`` as the latest; its new Spark stages join the recent ones and leave the report
        (each report carries only the stages since the one before)."""
        if report.spark is not None:
            self.spark_stages.extend(report.spark.stages)
            report = dataclasses.replace(report, spark=dataclasses.replace(report.spark, stages=[]))
        self.metrics = report
        return report

    @property
    def tm_id(self) -> TaskManagerId | None:
        return self.slot.tm_id if self.slot else None

    @property
    def slot_index(self) -> int | None:
        return self.slot.slot_index if self.slot else None

    @property
    def allocation_id(self) -> AllocationId | None:
        return self.slot.allocation_id if self.slot else None

    @property
    def host(self) -> str | None:
        return self.slot.host if self.slot else None

    @property
    def data_port(self) -> int | None:
        return self.slot.data_port if self.slot else None

    def transition(self, target: ExecutionState) -> bool:
        """Move to ``target``; returns False when already there (a repeated report)."""
        if self.state == target:
            return False
        self.state = advance(self.state, target)
        self.state_times[target.value] = time.time()
        return True


@dataclass
class ExecutionVertex:
    subtask_index: int
    current: Execution


@dataclass
class ExecutionJobVertex:
    """A task: a chain of operators run together, with ``parallelism`` subtasks."""
    id: JobVertexId
    name: str
    operators: list[OperatorSpec]
    parallelism: int
    inputs: list[EdgeSpec]
    outputs: list[EdgeSpec]
    subtasks: list[ExecutionVertex] = field(default_factory=list)

    @property
    def head(self) -> OperatorSpec:
        return self.operators[0]

    @property
    def tail(self) -> OperatorSpec:
        return self.operators[-1]

    def status(self) -> ExecutionState:
        """Aggregate state the way Flink's vertex status reads: the least advanced live state wins."""
        states = [v.current.state for v in self.subtasks]
        for s in (ExecutionState.FAILED, ExecutionState.CANCELING, ExecutionState.CANCELED):
            if s in states:
                return s
        for s in (ExecutionState.CREATED, ExecutionState.SCHEDULED, ExecutionState.DEPLOYING,
                  ExecutionState.INITIALIZING, ExecutionState.RUNNING):
            if s in states:
                return s
        return ExecutionState.FINISHED


def _placed(execution: Execution) -> AllocatedSlot:
    """The slot of an attempt being deployed; every attempt of a round has one before any deploys."""
    if execution.slot is None:
        raise RuntimeError(f"attempt {execution.attempt_id} has no slot yet")
    return execution.slot


class ExecutionGraph:
    """The physical plan of one job attempt series; a restart creates fresh Executions in place."""

    def __init__(self, graph: JobGraph):
        self.job_graph = graph
        self.attempt = 0
        self.vertices: list[ExecutionJobVertex] = []
        op_to_vertex: dict[str, JobVertexId] = {}
        for chain in chain_operators(graph):
            vid = vertex_id_for(chain[0].id)
            parallelism = chain[0].parallelism
            if parallelism is None:
                raise ValueError(f"operator '{chain[0].name}' has no parallelism: validate the JobGraph first")
            for op in chain:
                op_to_vertex[op.id] = vid
            self.vertices.append(ExecutionJobVertex(
                id=vid, name=" -> ".join(op.name for op in chain), operators=chain,
                parallelism=parallelism, inputs=graph.inputs_of(chain[0].id),
                outputs=graph.outputs_of(chain[-1].id)))
        self.op_to_vertex = op_to_vertex
        self.reset_attempts()

    @property
    def max_parallelism(self) -> int:
        return max(v.parallelism for v in self.vertices)

    def vertex(self, vid: JobVertexId) -> ExecutionJobVertex:
        for v in self.vertices:
            if v.id == vid:
                return v
        raise KeyError(vid)

    def reset_attempts(self) -> None:
        """Give every subtask a fresh attempt (at start and at each restart)."""
        number = self.attempt
        for v in self.vertices:
            v.subtasks = [ExecutionVertex(i, Execution(ExecutionAttemptId.new(), number, i))
                          for i in range(v.parallelism)]

    def executions(self):
        for v in self.vertices:
            for sub in v.subtasks:
                yield v, sub.current

    def find(self, attempt_id: ExecutionAttemptId):
        for v, ex in self.executions():
            if ex.attempt_id == attempt_id:
                return v, ex
        return None, None

    def all_in(self, *states: ExecutionState) -> bool:
        return all(ex.state in states for _, ex in self.executions())

    def plan(self) -> tuple[PlanNode, ...]:
        """The dataflow plan: one node per task with its operators, inputs and ship strategy."""
        return tuple(PlanNode(v.id, v.name, v.parallelism, tuple((op.id, op.name, op.kind) for op in v.operators),
                              tuple(PlanInput(self.op_to_vertex[e.source], e.partitioning.upper(), tuple(e.keys))
                                    for e in v.inputs)) for v in self.vertices)

    def vertex_snapshots(self, max_parallelism: int) -> tuple[VertexSnapshot, ...]:
        """Each task with the current attempt of each of its subtasks (runtime.snapshots)."""
        return tuple(VertexSnapshot(
            v.id, v.name, v.parallelism, max_parallelism, v.status(), tuple(op.name for op in v.operators),
            tuple(SubtaskSnapshot(sub.subtask_index, sub.current.state, sub.current.attempt_number,
                                  sub.current.attempt_id, sub.current.tm_id, sub.current.host, sub.current.slot_index,
                                  {ExecutionState(k): t for k, t in sub.current.state_times.items()},
                                  sub.current.metrics, sub.current.error, tuple(sub.current.spark_stages))
                  for sub in v.subtasks))
            for v in self.vertices)

    def state_counts(self) -> dict[ExecutionState, int]:
        """How many current attempts are in each state."""
        counts = {s: 0 for s in ExecutionState}
        for _, ex in self.executions():
            counts[ex.state] += 1
        return counts

    def output_rate(self) -> float:
        """Rows per second leaving the job's last tasks, as their attempts last reported."""
        return sum(ex.metrics.records_out_per_s for v, ex in self.executions() if not v.outputs and ex.metrics)

    def deployment(self, vertex: ExecutionJobVertex, execution: Execution, job_id: JobId, conf: Configuration,
                   checkpointing: bool) -> TaskDeploymentDescriptor:
        """What a TaskManager needs to run ``execution``: its operators, where each input's producers
        are (host and data port of their slots) and how many consumers each output has."""
        inputs = []
        for edge in vertex.inputs:
            upstream = self.vertex(self.op_to_vertex[edge.source])
            producers = [ProducerLocation(s.current.attempt_id, s.subtask_index, slot.tm_id, slot.host, slot.data_port)
                         for s in upstream.subtasks for slot in [_placed(s.current)]]
            inputs.append(InputGateDescriptor(upstream.id, edge.partitioning, producers))
        outputs = [OutputDescriptor(self.op_to_vertex[e.target], e.partitioning, e.keys,
                                    self.vertex(self.op_to_vertex[e.target]).parallelism) for e in vertex.outputs]
        return TaskDeploymentDescriptor(
            job_id=job_id, job_name=self.job_graph.name, vertex_id=vertex.id, task_name=vertex.name,
            attempt_id=execution.attempt_id, attempt_number=execution.attempt_number,
            subtask_index=execution.subtask_index, parallelism=vertex.parallelism,
            max_parallelism=conf.get("pipeline.max-parallelism"), allocation_id=_placed(execution).allocation_id,
            operators=vertex.operators, inputs=inputs, outputs=outputs, config=conf.as_strings(),
            runtime_mode=conf.get("execution.runtime-mode"), checkpointing=checkpointing,
            incremental_checkpoints=conf.get("execution.checkpointing.incremental"),
            python_dependencies=self.job_graph.python_dependencies)
