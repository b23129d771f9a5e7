"""Checkpoint storage on the local filesystem: what deleting leaves behind."""
from runtime.checkpoint import storage


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
