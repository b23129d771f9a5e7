"""Incremental checkpoints on a subtask's side, without processes: splitting state by key group, digests,
what is uploaded and what referred to, and restoring (rescaled) from the references in real files."""
from __future__ import annotations

import pyarrow as pa

from runtime.checkpoint import storage
from runtime.checkpoint.incremental import (IncrementalBase, SliceRef, digest, key_group_slices, plan_operator,
                                            sorted_by_key_group)
from runtime.checkpoint.task_state import SINK_STAGING, read_restored, write_snapshot
from runtime.ids import AllocationId, ExecutionAttemptId, JobId, JobVertexId
from runtime.jobgraph import OperatorSpec
from runtime.keygroups import KEY_GROUP_COLUMN, KeyGroupRange
from runtime.messages import TaskDeploymentDescriptor
from runtime.taskmanager.keyed_state import KeyedStateBackend

MAX_PARALLELISM = 16
KEYS = 400


def state_table(values: dict[int, int]) -> pa.Table:
    """Keyed state as operators snapshot it: one row per key, with its key group, in no particular order."""
    keys = sorted(values, key=lambda k: (k * 7919) % 1013)
    return pa.table({KEY_GROUP_COLUMN: pa.array([k % MAX_PARALLELISM for k in keys], pa.int64()),
                     "key": pa.array(keys, pa.int64()), "value": pa.array([values[k] for k in keys], pa.int64())})


def test_slices_follow_key_group_order_and_hold_exactly_their_groups_rows():
    table = state_table({k: k for k in range(KEYS)})
    slices = list(key_group_slices(sorted_by_key_group(table)))
    assert [kg for kg, _ in slices] == list(range(MAX_PARALLELISM))
    for kg, piece in slices:
        assert sorted(piece.column(1).to_pylist()) == [k for k in range(KEYS) if k % MAX_PARALLELISM == kg]
    assert list(key_group_slices(sorted_by_key_group(table.slice(0, 0)))) == []


def test_a_slices_digest_depends_on_its_rows_alone():
    before = dict(key_group_slices(sorted_by_key_group(state_table({k: k for k in range(KEYS)}))))
    after = dict(key_group_slices(sorted_by_key_group(state_table({**{k: k for k in range(KEYS)}, 5: -1}))))
    assert digest(before[3]) == digest(after[3]), "another key group's change leaves this one's digest"
    assert digest(before[5]) != digest(after[5])


def test_a_changed_dictionary_changes_the_digest():
    def table(words):
        return pa.table({KEY_GROUP_COLUMN: pa.array([0, 0], pa.int64()),
                         "word": pa.array(words).dictionary_encode()})
    (_, a), = key_group_slices(sorted_by_key_group(table(["x", "y"])))
    (_, b), = key_group_slices(sorted_by_key_group(table(["x", "z"])))
    assert digest(a) != digest(b)


def test_only_changed_key_groups_are_planned_for_upload():
    values = {k: k for k in range(KEYS)}
    first = plan_operator(state_table(values), {})
    assert first.changed.num_rows == KEYS and not first.kept
    total = sum(size for _, size in first.digests.values())
    base = {kg: SliceRef(d, "s/first", size, total) for kg, (d, size) in first.digests.items()}
    assert plan_operator(state_table(values), base).changed is None
    values[5] = values[21] = -1  # both in key group 5
    values[KEYS] = 0  # a new key, in key group 0
    again = plan_operator(state_table(values), base)
    assert sorted(again.digests) == [0, 5] and set(again.kept) == set(range(MAX_PARALLELISM)) - {0, 5}
    assert sorted(again.changed.column("key").to_pylist()) == sorted(k for k in values if k % MAX_PARALLELISM in (0, 5))


def test_key_groups_left_in_a_mostly_rewritten_file_are_uploaded_again():
    values = {k: k for k in range(KEYS)}
    first = plan_operator(state_table(values), {})
    total = sum(size for _, size in first.digests.values())
    base = {kg: SliceRef(d, "s/first", size, total) for kg, (d, size) in first.digests.items()}
    half = MAX_PARALLELISM // 2

    def rewritten(*key_groups):  # as if later checkpoints had written these key groups to files of their own
        for kg in key_groups:
            base[kg] = SliceRef(base[kg].digest, f"s/later-{kg}", base[kg].size, base[kg].size)
    rewritten(*range(half - 1))
    assert plan_operator(state_table(values), base).changed is None, "s/first still mostly holds kept rows"
    rewritten(half - 1, half)
    again = plan_operator(state_table(values), base)
    assert sorted(again.digests) == list(range(half + 1, MAX_PARALLELISM)), "what s/first still holds, again"
    assert "s/first" not in {ref.file for ref in again.kept.values()}


def test_the_base_moves_to_completed_checkpoints_only_and_an_abort_forgets_it():
    base = IncrementalBase()
    refs = {"op": {0: SliceRef(b"d", "s/a", 1, 1)}}
    base.taken(1, refs)
    assert base.base == {}
    base.completed(1)
    assert base.base == refs
    base.taken(2, {"op": {}})
    base.completed(3)  # a savepoint: its snapshot was full, nothing of it to compare with
    assert base.base == refs and 2 in base.pending
    base.completed(2)
    assert base.base == {"op": {}}
    base.aborted(4)
    assert base.base == {} and base.base_id == 2


def descriptor(op_id: str, subtask: int, parallelism: int, pointers: list[str]) -> TaskDeploymentDescriptor:
    return TaskDeploymentDescriptor(JobId("job"), "job", JobVertexId("v"), "v", ExecutionAttemptId(f"a{subtask}"), 0,
                                    subtask, parallelism, MAX_PARALLELISM, AllocationId("slot"),
                                    [OperatorSpec(op_id, "process", "process")], restore=pointers)


def backend(values: dict[int, int]) -> KeyedStateBackend:
    state = KeyedStateBackend()
    for key, value in values.items():
        state.set_current_key(key % MAX_PARALLELISM, key)
        state.write("count", value)
    return state


def test_an_incremental_checkpoint_uploads_the_changes_and_restores_the_latest_state_rescaled(tmp_path):
    base_url = (tmp_path / "chk").as_uri()
    values = {k: k for k in range(KEYS)}
    state = backend(values)
    staged = pa.table({"x": [1]})
    first = write_snapshot(storage.checkpoint_dir(base_url, "job", 1), "v-0", {"subtask": 0},
                           {"op": state.snapshot(), SINK_STAGING: staged}, {})
    assert len(first.uploaded) == 1 and first.reused == ()
    assert first.uploaded[0].startswith(storage.job_shared_dir(base_url, "job") + "/op-")
    for key in (0, 16):  # both in key group 0: the new file is read first, the stale rows of the old one after
        values[key] += 1000
        state.set_current_key(key % MAX_PARALLELISM, key)
        state.write("count", values[key])
    second = write_snapshot(storage.checkpoint_dir(base_url, "job", 2), "v-0", {"subtask": 0},
                            {"op": state.snapshot(), SINK_STAGING: staged}, first.refs)
    assert second.reused == first.uploaded and len(second.uploaded) == 1
    assert second.checkpointed_size * 5 < second.state_size, "a small change uploads a small part of the state"
    assert abs(second.state_size - first.state_size) < first.state_size / 50, "the whole state's size, wherever it is"

    restored = {}
    for subtask in range(2):  # rescaled: each new subtask keeps the key groups it now owns
        _, _, keyed = read_restored(descriptor("op", subtask, 2, [second.pointer]), False, False)
        owned = KeyGroupRange.for_operator(MAX_PARALLELISM, 2, subtask)
        part = KeyedStateBackend()
        part.restore(keyed["op"], range(owned.start, owned.end + 1))
        assert {kg for kg, _ in part.values} <= set(owned)
        restored.update({key: entry["count"] for (_, key), entry in part.values.items()})
    assert restored == values


def test_a_full_snapshot_refers_to_nothing(tmp_path):
    written = write_snapshot(storage.checkpoint_dir(tmp_path.as_uri(), "job", 1), "v-0", {},
                             {"op": backend({1: 1}).snapshot()}, None)
    assert written.uploaded == written.reused == () and written.refs == {}
    assert written.state_size == written.checkpointed_size
    assert storage.shared_dir(storage.checkpoint_dir(tmp_path.as_uri(), "job", 1)) == \
        storage.job_shared_dir(tmp_path.as_uri(), "job")
