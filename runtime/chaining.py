"""Operator chaining: which operators of a JobGraph run together as one task, as Flink chains them.

Operators joined by a forward edge of equal parallelism, where the upstream has no other output, run in
one task (unless an operator asks not to be chained). The JobManager's ExecutionGraph is built from these
chains; the DataStream API's ``explain`` describes them, so a client shows the tasks without the JobManager.
"""
from __future__ import annotations

import hashlib

from runtime.ids import JobVertexId
from runtime.jobgraph import JobGraph, OperatorSpec


def vertex_id_for(head_op_id: str) -> JobVertexId:
    """Stable across restarts and resubmission of the same graph, so checkpointed state finds its task."""
    return JobVertexId(hashlib.md5(head_op_id.encode()).hexdigest())


def chain_operators(graph: JobGraph) -> list[list[OperatorSpec]]:
    """Group operators into chains, in topological order of the chain heads."""
    chained_to_predecessor = {
        op.id for op in graph.operators if _can_chain_into(graph, op)
    }
    chains = []
    for op_id in graph.topological_order():
        if op_id in chained_to_predecessor:
            continue
        chain = [graph.operator(op_id)]
        while True:
            outs = graph.outputs_of(chain[-1].id)
            if len(outs) == 1 and outs[0].target in chained_to_predecessor:
                chain.append(graph.operator(outs[0].target))
            else:
                break
        chains.append(chain)
    return chains


def _can_chain_into(graph: JobGraph, op: OperatorSpec) -> bool:
    inputs = graph.inputs_of(op.id)
    if len(inputs) != 1 or inputs[0].partitioning != "forward":
        return False
    upstream = graph.operator(inputs[0].source)
    return upstream.parallelism == op.parallelism and len(graph.outputs_of(upstream.id)) == 1 \
        and not op.params.get("disable_chaining")


def describe_tasks(graph: JobGraph) -> str:
    """The tasks ``graph`` runs as (EXPLAIN's physical plan): each chain with its parallelism and inputs."""
    chains = chain_operators(graph)
    names = {op.id: " -> ".join(o.name for o in chain) for chain in chains for op in chain}
    slots = max((chain[0].parallelism or 1 for chain in chains), default=0)
    lines = [f"ExecutionGraph of '{graph.name}': {len(chains)} tasks, {slots} slots needed"]
    for chain in chains:
        ins = ", ".join(f"{e.partitioning}{'(' + ','.join(e.keys) + ')' if e.keys else ''} from {names[e.source]!r}"
                        for e in graph.inputs_of(chain[0].id))
        lines.append(f"  task {names[chain[0].id]!r} x{chain[0].parallelism}" + (f" <- {ins}" if ins else ""))
    return "\n".join(lines)
