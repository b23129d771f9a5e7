"""Pickling keyed state for snapshots: plain values take the fast path and read back as cloudpickle's do."""
import cloudpickle

from runtime.taskmanager.keyed_state import KeyedStateBackend, dumps


def test_plain_values_pickle_to_cloudpickles_bytes_and_others_go_through_cloudpickle():
    for value in (1, -5, 2**70, 1.5, "x", b"y", True, None, (1, "a", None), ("a", (1, 2)), [1, 2], {"a": 1}):
        assert dumps(value) == cloudpickle.dumps(value), value
    local = lambda x: x + 1  # noqa: E731 - only cloudpickle pickles a lambda
    assert cloudpickle.loads(dumps(local))(1) == 2


def test_a_snapshot_restores_the_same_values():
    state = KeyedStateBackend()
    for key in (1, "k", (2, "t")):
        state.set_current_key(7, key)
        state.write("v", {"key": key, "n": [1, 2]})
    again = KeyedStateBackend()
    again.restore([state.snapshot()], range(0, 128))
    assert again.values == state.values
