"""The JobGraph a client submits: operators and the edges between them, as plain data.

The JobManager reads the structure (ids, kinds, parallelism, edges) without running user code; user
functions travel inside ``OperatorSpec.udf`` as base64 cloudpickle that only TaskManagers load.
"""
from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any

from runtime.errors import SubmissionError
from runtime.codec import WireError, from_plain, to_plain, wire
from runtime.python_dependencies import PythonDependencies

PARTITIONINGS = ("forward", "hash", "rebalance", "broadcast")
SOURCE_KINDS = ("source",)
SINK_KINDS = ("sink",)
# keyed state: every row of a key must reach one subtask (the sql_* kinds are SQL's stateful operators)
KEYED_KINDS = ("window_aggregate", "keyed_process", "sql_group_aggregate", "sql_rank", "sql_join",
               "sql_interval_join", "sql_window_join", "sql_over")


class JobGraphError(SubmissionError):
    """A submitted JobGraph that cannot run as described."""


@wire
@dataclass
class OperatorSpec:
    """One operator. ``params`` holds JSON-able settings (expressions, connector options, window)."""
    id: str
    name: str
    kind: str
    parallelism: int | None = None
    params: dict[str, Any] = field(default_factory=dict)
    udf: str | None = None


@wire
@dataclass
class EdgeSpec:
    source: str
    target: str
    partitioning: str = "forward"
    keys: list[str] = field(default_factory=list)


@wire
@dataclass
class JobGraph:
    name: str
    operators: list[OperatorSpec]
    edges: list[EdgeSpec] = field(default_factory=list)
    config: dict[str, str] = field(default_factory=dict)
    restore_from: str | None = None
    statement: str | None = None  # the SQL a job was planned from, shown with the job
    python_dependencies: PythonDependencies | None = None  # files, archives, requirements its functions need

    def operator(self, op_id: str) -> OperatorSpec:
        for op in self.operators:
            if op.id == op_id:
                return op
        raise JobGraphError(f"no operator with id {op_id!r}")

    def inputs_of(self, op_id: str) -> list[EdgeSpec]:
        return [e for e in self.edges if e.target == op_id]

    def outputs_of(self, op_id: str) -> list[EdgeSpec]:
        return [e for e in self.edges if e.source == op_id]

    def validate(self, default_parallelism: int) -> None:
        """Check structure; fill in parallelism. Raises JobGraphError naming the operator at fault."""
        ids = [op.id for op in self.operators]
        if not self.operators:
            raise JobGraphError("the job has no operators")
        if len(set(ids)) != len(ids):
            raise JobGraphError("operator ids must be unique")
        for op in self.operators:
            if op.parallelism is None:
                op.parallelism = default_parallelism
            if not isinstance(op.parallelism, int) or op.parallelism < 1:
                raise JobGraphError(f"operator '{op.name}': parallelism must be a positive integer")
        for edge in self.edges:
            for end in (edge.source, edge.target):
                if end not in ids:
                    raise JobGraphError(f"edge {edge.source}->{edge.target} names unknown operator {end!r}")
            if edge.partitioning not in PARTITIONINGS:
                raise JobGraphError(f"edge into '{self.operator(edge.target).name}': unknown partitioning "
                                    f"{edge.partitioning!r}, expected one of {list(PARTITIONINGS)}")
            if edge.partitioning == "hash" and not edge.keys:
                raise JobGraphError(f"edge into '{self.operator(edge.target).name}': hash partitioning needs key columns")
            if edge.partitioning == "forward" and \
                    self.operator(edge.source).parallelism != self.operator(edge.target).parallelism:
                raise JobGraphError(f"forward edge into '{self.operator(edge.target).name}' joins operators of "
                                    "different parallelism; use rebalance")
        for op in self.operators:
            has_inputs = bool(self.inputs_of(op.id))
            if op.kind in SOURCE_KINDS and has_inputs:
                raise JobGraphError(f"source '{op.name}' cannot have inputs")
            if op.kind not in SOURCE_KINDS and not has_inputs:
                raise JobGraphError(f"operator '{op.name}' has no input")
            if op.kind in KEYED_KINDS and any(e.partitioning != "hash" for e in self.inputs_of(op.id)):
                raise JobGraphError(f"keyed operator '{op.name}' needs hash-partitioned input (key_by)")
        if not any(op.kind in SINK_KINDS for op in self.operators):
            raise JobGraphError("the job has no sink: add one with sink_to(), collect(), print() or similar")
        self._check_acyclic()

    def _check_acyclic(self) -> None:
        seen: set[str] = set()
        for op_id in self.topological_order():
            seen.add(op_id)
        if len(seen) != len(self.operators):
            raise JobGraphError("the job graph has a cycle")

    def topological_order(self) -> list[str]:
        indegree = {op.id: 0 for op in self.operators}
        for e in self.edges:
            indegree[e.target] += 1
        ready = [i for i, d in indegree.items() if d == 0]
        order = []
        while ready:
            current = ready.pop(0)
            order.append(current)
            for e in self.outputs_of(current):
                indegree[e.target] -= 1
                if indegree[e.target] == 0:
                    ready.append(e.target)
        return order


def pack_udf(fn: Any) -> str:
    """cloudpickle a user function for the wire."""
    import cloudpickle

    return base64.b64encode(cloudpickle.dumps(fn)).decode("ascii")


def unpack_udf(blob: str) -> Any:
    """Load a user function on a TaskManager; any failure is re-raised as a readable error."""
    import pickle

    try:
        return pickle.loads(base64.b64decode(blob))
    except Exception as err:  # noqa: BLE001 - any unpickling failure means the same thing
        raise SubmissionError(f"cannot load user function: {type(err).__name__}: {err}") from err


def read_job_graph(data: Any) -> JobGraph:
    """A JobGraph from its JSON form (what ``POST /jobs`` carries as ``job_graph``); SubmissionError says
    what does not fit."""
    try:
        return from_plain({"type": "JobGraph", **data} if isinstance(data, dict) else data, JobGraph)
    except (WireError, TypeError) as err:
        raise SubmissionError(f"job_graph is malformed: {err}") from None


def job_graph_json(graph: JobGraph) -> dict:
    """The JSON form of ``graph`` that :func:`read_job_graph` reads."""
    return {k: v for k, v in to_plain(graph).items() if k != "type"}
