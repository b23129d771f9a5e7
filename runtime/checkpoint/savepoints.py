"""Savepoints and retained checkpoints as a browser shows them, and whether one fits a job.

:func:`find` lists every savepoint and retained checkpoint under some directories (``state.savepoints.dir``
holds ``savepoint-<job>-<n>``, ``state.checkpoints.dir`` holds ``<job>/chk-<n>``: any directory with a
``_metadata``), :func:`describe` one of them: when it was taken, by which job, at what parallelism, and
each operator's state (bytes, and on request rows and distinct keys, read from its Arrow tables).

:func:`check` compares a savepoint with a job about to start from it, as Flink does when it restores: the
operators whose state it restores (matched by operator id, which ``uid()`` sets), those whose state has no
operator in the job and would be dropped (refused unless ``execution.state-recovery.ignore-unclaimed-state``,
the CLI's ``--allowNonRestoredState``), the job's operators that start with no state, rescaled operators,
and a max parallelism that differs (refused: key groups would not map). Reading blocks (storage I/O).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import pyarrow as pa

from runtime.checkpoint import storage
from runtime.checkpoint.task_state import SINK_STAGING
from runtime.jobgraph import JobGraph

IGNORE_UNCLAIMED = "execution.state-recovery.ignore-unclaimed-state"
SOURCE, SINK, KEYED = "source offsets", "sink staging", "keyed state"


@dataclass(frozen=True)
class OperatorState:
    """One operator's state in a savepoint, over the old job's subtasks that held some."""
    operator_id: str
    kinds: tuple[str, ...]
    subtasks: int
    bytes: int = 0
    rows: int | None = None  # keyed state rows (with describe(keys=True))
    keys: int | None = None  # distinct keys of its keyed state (with describe(keys=True))


@dataclass(frozen=True)
class SavepointSummary:
    path: str
    kind: str  # savepoint or checkpoint
    checkpoint_id: int
    job_id: str
    timestamp: float
    max_parallelism: int | None
    size: int
    parallelism: dict[str, int]  # every operator of the job that took it -> its subtasks
    state: tuple[OperatorState, ...]  # the operators that hold state in it

    @property
    def stateful(self) -> set[str]:
        return {s.operator_id for s in self.state}


def find(directories: list[str]) -> list[SavepointSummary]:
    """Every savepoint and retained checkpoint directly under ``directories`` or one level down (a job's
    checkpoints), newest first; unreadable ones are left out."""
    found: dict[str, SavepointSummary] = {}
    for directory in directories:
        base = storage.normalise(directory)
        for name in storage.list_dirs(base):
            candidates = [storage.join(base, name)]
            if not name.startswith("savepoint-"):
                candidates += [storage.join(base, name, sub) for sub in storage.list_dirs(storage.join(base, name))
                               if sub.startswith("chk-")]
            for path in candidates:
                if path not in found and storage.exists(storage.join(path, storage.METADATA)):
                    try:
                        found[path] = describe(path)
                    except storage.StorageError:
                        continue
    return sorted(found.values(), key=lambda s: s.timestamp, reverse=True)


def describe(path: str, keys: bool = False) -> SavepointSummary:
    """One savepoint or checkpoint (the directory holding ``_metadata``); StorageError when it is not one.
    ``keys`` also reads its keyed state to count rows and distinct keys per operator."""
    directory = storage.normalise(path)
    meta = storage.read_json(storage.join(directory, storage.METADATA))
    try:
        subtasks = list(meta["subtasks"])
        parallelism: dict[str, int] = {}
        for sub in subtasks:
            for op in sub["operators"]:
                parallelism[op] = parallelism.get(op, 0) + 1
        state = _operator_state(subtasks, keys)
        return SavepointSummary(directory, "savepoint" if meta["is_savepoint"] else "checkpoint", meta["checkpoint_id"],
                                meta["job_id"], meta["timestamp"], meta.get("max_parallelism"),
                                sum(s["size"] for s in subtasks), parallelism, state)
    except (KeyError, TypeError) as err:
        raise storage.StorageError(f"{directory} has malformed checkpoint metadata ({err!r})") from None


@dataclass
class _Tally:
    kinds: set[str] = field(default_factory=set)
    subtasks: int = 0
    bytes: int = 0
    rows: int = 0
    keys: set = field(default_factory=set)


def _operator_state(subtasks: list[dict], keys: bool) -> tuple[OperatorState, ...]:
    tallies: dict[str, _Tally] = {}
    for sub in subtasks:
        state = storage.read_json(storage.join(sub["pointer"], "state.json"))
        held: dict[str, set[str]] = {}
        if "source" in state:
            held.setdefault(state["source_op"], set()).add(SOURCE)
        if "sink" in state:
            held.setdefault(state["sink_op"], set()).add(SINK)
        for op_id in {*state.get("tables", {}), *state.get("shared", {})} - {SINK_STAGING}:
            held.setdefault(op_id, set()).add(KEYED)
        for op_id, kinds in held.items():
            tally = tallies.setdefault(op_id, _Tally())
            tally.kinds |= kinds
            tally.subtasks += 1
            if op_id in state.get("tables", {}):
                tally.bytes += storage.size(storage.join(sub["pointer"], state["tables"][op_id]))
            if keys and KEYED in kinds:
                _count_keys(tally, sub["pointer"], op_id)
    return tuple(OperatorState(op, tuple(sorted(t.kinds)), t.subtasks, t.bytes,
                               t.rows if keys and KEYED in t.kinds else None,
                               len(t.keys) if keys and KEYED in t.kinds else None) for op, t in sorted(tallies.items()))


def _count_keys(tally: _Tally, pointer: str, op_id: str) -> None:
    """Add one subtask's keyed state of ``op_id``: its rows, and its keys (see :func:`keys_of`)."""
    _, tables = storage.read_subtask_state(pointer)
    for table in tables.get(op_id, []):
        tally.rows += table.num_rows
        tally.keys |= keys_of(table)


def keys_of(table: pa.Table) -> set:
    """The distinct keys of a keyed state table: the ``key`` column of keyed process state (and SQL's keyed
    operators), else the columns that are not the runtime's own (``__``: key group, window, partials)."""
    names = table.column_names
    columns = ["key"] if "key" in names and "kind" in names else [c for c in names if not c.startswith("__")]
    if not columns or not table.num_rows:
        return set()
    return set(zip(*(table.column(c).to_pylist() for c in columns)))


@dataclass(frozen=True)
class Compatibility:
    """How a savepoint fits a job about to start from it."""
    savepoint: str
    matched: tuple[str, ...]  # operators whose state is restored
    dropped: tuple[str, ...]  # state with no operator in the job: dropped only with the flag
    new: tuple[str, ...]  # the job's operators with no state in the savepoint
    rescaled: dict[str, tuple[int, int]]  # operator -> (old subtasks, new parallelism)
    max_parallelism: tuple[int | None, int]  # the savepoint's and the job's
    allow_non_restored_state: bool

    @property
    def problems(self) -> list[str]:
        old, new = self.max_parallelism
        out = []
        if old is not None and old != new:
            out.append(f"the savepoint's max parallelism is {old} and the job's {new} (pipeline.max-parallelism): "
                       "its keyed state is split into key groups that would not map; keep the max parallelism")
        if self.dropped and not self.allow_non_restored_state:
            out.append(f"Failed to rollback to checkpoint/savepoint {self.savepoint}. Cannot map checkpoint/savepoint "
                       f"state for operator {', '.join(self.dropped)} to the new program, because the operator is not "
                       "available in the new program. If you want to allow to skip this, you can set the "
                       f"--allowNonRestoredState option on the CLI ({IGNORE_UNCLAIMED}: true).")
        return out

    @property
    def compatible(self) -> bool:
        return not self.problems


def check(savepoint: SavepointSummary, graph: JobGraph, max_parallelism: int, default_parallelism: int,
          allow_non_restored_state: bool) -> Compatibility:
    ops = {op.id: op.parallelism or default_parallelism for op in graph.operators}
    matched = tuple(sorted(savepoint.stateful & set(ops)))
    return Compatibility(
        savepoint.path, matched, tuple(sorted(savepoint.stateful - set(ops))), tuple(sorted(set(ops) - savepoint.stateful)),
        {op: (savepoint.parallelism.get(op, 0), ops[op]) for op in matched if savepoint.parallelism.get(op) != ops[op]},
        (savepoint.max_parallelism, max_parallelism), allow_non_restored_state)
