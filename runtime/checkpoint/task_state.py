"""What one subtask puts into a checkpoint and takes back on restore: its source position, what its
sink staged, and the state of each stateful operator of its chain, keyed by operator id."""
from __future__ import annotations

import collections
from typing import Any

import pyarrow as pa

from runtime.checkpoint import storage
from runtime.messages import TaskDeploymentDescriptor

SINK_STAGING = "__sink_staging__"  # the snapshot table of what a sink staged (not an operator id)


def take_snapshot(tdd: TaskDeploymentDescriptor, reader: Any, sink: Any, stateful: list,
                  checkpoint_id: int) -> tuple[dict, dict[str, pa.Table]]:
    """The subtask's snapshot in memory (between bundles): metadata and one Arrow table per part."""
    meta: dict[str, Any] = {"subtask": tdd.subtask_index, "parallelism": tdd.parallelism,
                            "operators": [op.id for op in tdd.operators]}
    tables: dict[str, pa.Table] = {}
    if reader is not None:
        meta["source"], meta["source_op"] = reader.snapshot(), tdd.operators[0].id
    if sink is not None:
        sink_meta, staged = sink.prepare_commit(checkpoint_id)
        meta["sink"], meta["sink_op"] = sink_meta, tdd.operators[-1].id
        if staged is not None:
            tables[SINK_STAGING] = staged
    for stage in stateful:
        table = stage.operator.snapshot()
        if table is not None:
            tables[stage.op.id] = table
    return meta, tables


def read_restored(tdd: TaskDeploymentDescriptor, with_source: bool, with_sink: bool):
    """Blocking: this task's share of the checkpoint it restores, from every old subtask that ran one
    of its operators: source positions, sinks' (subtask, metadata, staged rows), keyed state tables."""
    op_ids = {op.id for op in tdd.operators}
    sources: list = []
    sinks: list = []
    keyed: dict[str, list[pa.Table]] = collections.defaultdict(list)
    for pointer in tdd.restore:
        meta, tables = storage.read_subtask_state(pointer)
        if meta.get("source") is not None and with_source and meta.get("source_op") in op_ids:
            sources.append(meta["source"])
        if meta.get("sink") is not None and with_sink and meta.get("sink_op") in op_ids:
            sinks.append((meta["subtask"], meta["sink"], tables.get(SINK_STAGING)))
        for op_id, table in tables.items():
            if op_id in op_ids:
                keyed[op_id].append(table)
    return sources, sinks, keyed
