"""Checkpoint storage on the local filesystem: what deleting leaves behind, and what restoring missing or
damaged files says."""
from types import SimpleNamespace

import pytest

from runtime.checkpoint import storage
from runtime.checkpoint.task_state import read_restored
from runtime.errors import RestoreFailed


def test_remove_if_empty_deletes_an_empty_directory_and_leaves_one_being_filled(tmp_path):
    empty, filled = tmp_path / "chk-7", tmp_path / "chk-8"
    empty.mkdir()
    (filled / "v-0").mkdir(parents=True)
    storage.remove_if_empty(storage.normalise(str(empty)))
    storage.remove_if_empty(storage.normalise(str(filled)))
    storage.remove_if_empty(storage.normalise(str(tmp_path / "never-made")))
    assert not empty.exists() and (filled / "v-0").is_dir()


def test_the_parent_of_a_subtask_snapshot_is_its_checkpoint_directory():
    assert storage.parent("file:///c/job/chk-3/v-1") == storage.parent("file:///c/job/chk-3/v-1/") == "file:///c/job/chk-3"


def test_a_restore_of_missing_or_damaged_files_names_the_checkpoint_and_the_snapshot(tmp_path):
    pointer = storage.normalise(str(tmp_path / "chk-4" / "v-0-a"))
    tdd = SimpleNamespace(operators=[SimpleNamespace(id="op")], restore=[pointer], restore_checkpoint_id=4)
    with pytest.raises(RestoreFailed, match=r"checkpoint 4: cannot read the snapshot .*v-0-a: StorageError: no such"):
        read_restored(tdd, True, True)
    storage.write_json(storage.join(pointer, "state.json"), {"tables": {"op": "op.arrow"}})
    storage.write_bytes(storage.join(pointer, "op.arrow"), b"not arrow at all")
    with pytest.raises(RestoreFailed, match="checkpoint 4: .*ArrowInvalid"):
        read_restored(tdd, True, True)


def test_a_directory_replaced_by_a_file_is_not_a_reachable_directory(tmp_path):
    root = tmp_path / "checkpoints"
    root.mkdir()
    assert storage.is_directory(str(root))
    root.rmdir()
    root.write_text("an outage")
    assert not storage.is_directory(str(root)) and not storage.is_directory(str(root / "job"))
    assert not storage.is_directory(str(tmp_path / "missing"))
