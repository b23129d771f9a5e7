"""A stopped cluster's working directory: removed when it stopped cleanly, savepoints in it kept, all of it
kept (and said why) when a process failed."""
import os

from runtime.fileio import tidy_working_dir


def cluster_dir(tmp_path, savepoint: bool):
    root = tmp_path / "flinkbench-cluster-x"
    (root / "checkpoints" / "job1" / "chk-3").mkdir(parents=True)
    (root / "checkpoints" / "job1" / "chk-3" / "state.json").write_text("{}")
    (root / "jobmanager.log").write_text("log")
    (root / "token").write_text("t")
    if savepoint:
        (root / "checkpoints" / "savepoints" / "savepoint-1").mkdir(parents=True)
        (root / "checkpoints" / "savepoints" / "savepoint-1" / "_metadata").write_text("{}")
    return root


def test_a_clean_stop_removes_the_folder(tmp_path):
    root = cluster_dir(tmp_path, savepoint=False)
    assert tidy_working_dir(str(root), str(root / "checkpoints" / "savepoints"), []) is None
    assert not root.exists()


def test_savepoints_taken_into_it_stay_and_nothing_else(tmp_path):
    root = cluster_dir(tmp_path, savepoint=True)
    kept = tidy_working_dir(str(root), "file://" + str(root / "checkpoints" / "savepoints"), [])
    assert kept == f"its savepoints are kept in {root / 'checkpoints' / 'savepoints'}"
    left = sorted(os.path.relpath(os.path.join(d, f), root) for d, _, files in os.walk(root) for f in files)
    assert left == ["checkpoints/savepoints/savepoint-1/_metadata"]


def test_savepoints_elsewhere_do_not_keep_it(tmp_path):
    root = cluster_dir(tmp_path, savepoint=True)
    assert tidy_working_dir(str(root), str(tmp_path / "elsewhere"), []) is None
    assert not root.exists()


def test_a_failed_process_keeps_all_of_it_and_says_why(tmp_path):
    root = cluster_dir(tmp_path, savepoint=False)
    kept = tidy_working_dir(str(root), str(root / "checkpoints" / "savepoints"), ["taskmanager-1 had exited with code 1"])
    assert kept == f"its folder {root} is kept for its logs: taskmanager-1 had exited with code 1"
    assert (root / "jobmanager.log").exists() and (root / "checkpoints" / "job1" / "chk-3" / "state.json").exists()
