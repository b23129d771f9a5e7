"""What one subtask puts into a checkpoint and takes back on restore: its source position, what its
sink staged, and the state of each stateful operator of its chain, keyed by operator id."""
from __future__ import annotations

import collections
import uuid
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from runtime.arrow_ipc import table_to_ipc
from runtime.checkpoint import storage
from runtime.checkpoint.incremental import OperatorRefs, SliceRef, SnapshotRefs, plan_operator, splittable
from runtime.errors import RestoreFailed
from runtime.messages import TaskDeploymentDescriptor

SINK_STAGING = "__sink_staging__"  # the snapshot table of what a sink staged (not an operator id)


def take_snapshot(tdd: TaskDeploymentDescriptor, reader: Any, sink: Any, stateful: list,
                  checkpoint_id: int) -> tuple[dict, dict[str, pa.Table]]:
    """The subtask's snapshot in memory (between bundles): metadata and one Arrow table per part."""
    meta: dict[str, Any] = {"subtask": tdd.subtask_index, "parallelism": tdd.parallelism,
                            "operators": [op.id for op in tdd.operators]}
    tables: dict[str, pa.Table] = {}
    if reader is not None:
        meta["source"], meta["source_op"] = reader.snapshot_state(checkpoint_id), tdd.operators[0].id
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


@dataclass(frozen=True)
class WrittenSnapshot:
    """A subtask's snapshot in storage: what it acknowledges with."""
    pointer: str
    state_size: int  # bytes of its whole state: what a full snapshot writes
    checkpointed_size: int  # bytes written for this checkpoint
    refs: SnapshotRefs  # incremental: where each operator's key groups are (the base of a later snapshot)
    uploaded: tuple[str, ...] = ()  # shared files written for this checkpoint
    reused: tuple[str, ...] = ()  # shared files of earlier checkpoints it refers to


def write_snapshot(directory: str, name: str, meta: dict, tables: dict[str, pa.Table],
                   base: SnapshotRefs | None) -> WrittenSnapshot:
    """Blocking: write a snapshot from :func:`take_snapshot` under ``directory/name``. ``base`` None writes
    it full and self-contained (savepoints, incremental checkpoints off); otherwise keyed state goes to
    the shared directory, only the key groups that changed since ``base`` (the refs of the subtask's last
    completed checkpoint)."""
    if base is None:
        pointer, size = storage.write_subtask_state(directory, name, meta, tables)
        return WrittenSnapshot(pointer, size, size, {})
    private = {op_id: t for op_id, t in tables.items() if op_id == SINK_STAGING or not splittable(t)}
    refs: SnapshotRefs = {}
    uploaded: list[str] = []
    written = 0
    for op_id, table in tables.items():
        if op_id not in private:
            refs[op_id], url, size = _upload_changed(storage.shared_dir(directory), op_id, table, base.get(op_id, {}))
            uploaded += [url] if url else []
            written += size
    shared = {op_id: _files(op_refs) for op_id, op_refs in refs.items()}
    pointer, size = storage.write_subtask_state(directory, name, meta, private, shared)
    reused = sorted({url for files in shared.values() for url in files} - set(uploaded))
    whole = sum(ref.size for op_refs in refs.values() for ref in op_refs.values())
    return WrittenSnapshot(pointer, size + whole, size + written, refs, tuple(uploaded), tuple(reused))


def _upload_changed(shared_dir: str, op_id: str, table: pa.Table,
                    base: OperatorRefs) -> tuple[OperatorRefs, str | None, int]:
    """Write the key groups of ``table`` that differ from ``base`` to a new shared file; returns where every
    key group now is, the new file (None if nothing changed) and its size."""
    plan = plan_operator(table, base)
    if plan.changed is None:
        return plan.kept, None, 0
    url = storage.join(shared_dir, f"{op_id}-{uuid.uuid4().hex}.arrow")
    data = table_to_ipc(plan.changed)
    storage.write_bytes(url, data)
    total = sum(size for _, size in plan.digests.values())
    return {**plan.kept, **{kg: SliceRef(d, url, size, total) for kg, (d, size) in plan.digests.items()}}, url, len(data)


def _files(refs: OperatorRefs) -> dict[str, list[int]]:
    """Shared file -> the key groups to take from it."""
    files: dict[str, list[int]] = collections.defaultdict(list)
    for key_group, ref in sorted(refs.items()):
        files[ref.file].append(key_group)
    return dict(files)


def read_restored(tdd: TaskDeploymentDescriptor, with_source: bool, with_sink: bool):
    """Blocking: this task's share of the checkpoint it restores, from every old subtask that ran one
    of its operators: source positions, sinks' (subtask, metadata, staged rows), keyed state tables.
    RestoreFailed names the checkpoint and the snapshot whose files are missing or damaged."""
    op_ids = {op.id for op in tdd.operators}
    sources: list = []
    sinks: list = []
    keyed: dict[str, list[pa.Table]] = collections.defaultdict(list)
    for pointer in tdd.restore:
        try:
            meta, tables = storage.read_subtask_state(pointer)
        except Exception as err:  # noqa: BLE001 - missing, unreadable or damaged: the JobMaster falls back
            raise RestoreFailed(f"checkpoint {tdd.restore_checkpoint_id}: cannot read the snapshot {pointer}: "
                                f"{type(err).__name__}: {err}") from err
        if meta.get("source") is not None and with_source and meta.get("source_op") in op_ids:
            sources.append(meta["source"])
        if meta.get("sink") is not None and with_sink and meta.get("sink_op") in op_ids:
            sinks.append((meta["subtask"], meta["sink"], (tables.get(SINK_STAGING) or [None])[0]))
        for op_id, parts in tables.items():
            if op_id in op_ids:
                keyed[op_id].extend(parts)
    return sources, sinks, keyed
