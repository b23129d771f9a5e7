"""Savepoints as the browser reads them (written in the layout the runtime writes) and how one fits a job."""
from __future__ import annotations

import pyarrow as pa

from runtime.checkpoint import savepoints, storage
from runtime.checkpoint.task_state import SINK_STAGING
from runtime.jobgraph import EdgeSpec, JobGraph, OperatorSpec
from runtime.keygroups import KEY_GROUP_COLUMN
from runtime.taskmanager.keyed_state import SNAPSHOT_SCHEMA

JOB = "a" * 32


def keyed_rows(keys: list[bytes]) -> pa.Table:
    n = len(keys)
    return pa.table({KEY_GROUP_COLUMN: pa.array(range(n), pa.int64()), "key": keys, "kind": ["state"] * n,
                     "name": ["count"] * n, "timestamp": pa.array([None] * n, pa.int64()), "value": [b"1"] * n},
                    schema=SNAPSHOT_SCHEMA)


def window_rows(users: list[int]) -> pa.Table:
    return pa.table({"user": users, "__window_start": [0] * len(users), KEY_GROUP_COLUMN: [1] * len(users),
                     "__p_clicks": [1] * len(users)})


def write_savepoint(directory, checkpoint_id: int = 3, is_savepoint: bool = True, max_parallelism: int = 128) -> str:
    """Two subtasks of a source chain (offsets) and two of a keyed chain ending in a sink (counts, sink staging)."""
    path = storage.normalise(str(directory))
    subtasks = []
    for i in range(2):
        pointer, size = storage.write_subtask_state(path, f"src-{i}", {"source": {"offset": i}, "source_op": "src",
                                                                      "operators": ["src", "map-2"]}, {})
        subtasks.append({"vertex_id": "v1", "subtask": i, "pointer": pointer, "operators": ["src", "map-2"], "size": size})
        tables = {"counts": keyed_rows([b"k%d" % (i * 3 + j) for j in range(3)]), "windows": window_rows([i, i + 10]),
                  SINK_STAGING: pa.table({"x": [1]})}
        pointer, size = storage.write_subtask_state(path, f"keyed-{i}", {"sink": {}, "sink_op": "out",
                                                                        "operators": ["counts", "windows", "out"]}, tables)
        subtasks.append({"vertex_id": "v2", "subtask": i, "pointer": pointer, "operators": ["counts", "windows", "out"],
                         "size": size})
    storage.write_json(storage.join(path, storage.METADATA), {
        "job_id": JOB, "checkpoint_id": checkpoint_id, "timestamp": 1_700_000_000.0 + checkpoint_id,
        "is_savepoint": is_savepoint, "max_parallelism": max_parallelism, "subtasks": subtasks})
    return path


def graph(*op_ids: str, parallelism: int = 2) -> JobGraph:
    ops = [OperatorSpec(op, op, "process", parallelism) for op in op_ids]
    return JobGraph("g", ops, [EdgeSpec(a, b) for a, b in zip(op_ids, op_ids[1:])])


def test_describe_reads_each_operators_state_and_counts_keys_on_request(tmp_path):
    path = write_savepoint(tmp_path / "savepoint-aaaaaa-3")
    found = savepoints.describe(path)
    assert (found.kind, found.checkpoint_id, found.job_id, found.max_parallelism) == ("savepoint", 3, JOB, 128)
    assert found.parallelism == {"src": 2, "map-2": 2, "counts": 2, "windows": 2, "out": 2}
    state = {s.operator_id: s for s in found.state}
    assert set(state) == {"src", "counts", "windows", "out"}, "map-2 holds nothing; the sink's staging is the sink's"
    assert state["src"].kinds == (savepoints.SOURCE,) and state["out"].kinds == (savepoints.SINK,)
    assert state["counts"].bytes > 0 and state["counts"].keys is None
    counted = {s.operator_id: s for s in savepoints.describe(path, keys=True).state}
    assert (counted["counts"].rows, counted["counts"].keys) == (6, 6)
    assert (counted["windows"].rows, counted["windows"].keys) == (4, 4), "the window state's key is its user column"


def test_find_lists_savepoints_and_retained_checkpoints_newest_first(tmp_path):
    write_savepoint(tmp_path / "savepoint-aaaaaa-3")
    write_savepoint(tmp_path / JOB / "chk-7", checkpoint_id=7, is_savepoint=False)
    (tmp_path / JOB / "chk-8").mkdir()  # not complete: no _metadata
    (tmp_path / JOB / "shared").mkdir()
    found = savepoints.find([str(tmp_path)])
    assert [(s.kind, s.checkpoint_id) for s in found] == [("checkpoint", 7), ("savepoint", 3)]


def test_a_job_lacking_a_stateful_operator_needs_allow_non_restored_state(tmp_path):
    saved = savepoints.describe(write_savepoint(tmp_path / "sp"))
    same = savepoints.check(saved, graph("src", "map-2", "counts", "windows", "out"), 128, 1, False)
    assert same.compatible and same.matched == ("counts", "out", "src", "windows") and not same.dropped
    changed = savepoints.check(saved, graph("src", "counts", "out", "extra", parallelism=3), 128, 1, False)
    assert not changed.compatible and changed.dropped == ("windows",) and changed.new == ("extra",)
    assert "Cannot map checkpoint/savepoint state for operator windows" in changed.problems[0]
    assert changed.rescaled == {"counts": (2, 3), "out": (2, 3), "src": (2, 3)}
    allowed = savepoints.check(saved, graph("src", "counts", "out"), 128, 1, True)
    assert allowed.compatible and allowed.dropped == ("windows",)


def test_another_max_parallelism_is_refused_even_with_the_flag(tmp_path):
    saved = savepoints.describe(write_savepoint(tmp_path / "sp", max_parallelism=64))
    fit = savepoints.check(saved, graph("src", "map-2", "counts", "windows", "out"), 128, 1, True)
    assert not fit.compatible and "max parallelism is 64 and the job's 128" in fit.problems[0]
