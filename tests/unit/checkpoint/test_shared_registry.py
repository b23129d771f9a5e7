"""The reference registry of incremental checkpoints' shared files: counting per checkpoint, deletion
when the last checkpoint referring to a file goes, and references to files already deleted."""
from runtime.checkpoint.shared_registry import SharedStateRegistry


def test_a_file_is_deleted_when_the_last_checkpoint_referring_to_it_is_released():
    r = SharedStateRegistry()
    assert r.register(1, ["a", "b"], []) == []
    assert r.register(2, ["c"], ["a"]) == []  # b's key groups changed in checkpoint 2, a's did not
    assert r.release(1) == ["b"]
    assert r.live() == {"a", "c"}
    assert r.release(2) == ["a", "c"] and r.live() == set()


def test_registering_or_releasing_twice_changes_nothing():
    r = SharedStateRegistry()
    r.register(1, ["a"], [])
    r.register(1, [], ["a"])  # two subtasks' parts of checkpoint 1 name the same file
    r.register(2, [], ["a"])
    assert r.release(1) == [] and r.release(1) == []
    assert r.release(2) == ["a"]


def test_a_reference_to_a_deleted_file_is_reported_and_its_uploads_still_counted():
    r = SharedStateRegistry()
    r.register(1, ["a"], [])
    r.release(1)
    assert r.register(3, ["new"], ["a"]) == ["a"]
    assert r.release(3) == ["new"], "the failing checkpoint's own upload is deleted with it"
