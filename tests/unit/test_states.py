import pytest

from runtime.states import ExecutionState as E, IllegalTransition, JobStatus as J, advance


def test_normal_lives():
    s = J.INITIALIZING
    for nxt in (J.CREATED, J.RUNNING, J.RESTARTING, J.CREATED, J.RUNNING, J.FINISHED):
        s = advance(s, nxt)
    t = E.CREATED
    for nxt in (E.SCHEDULED, E.DEPLOYING, E.INITIALIZING, E.RUNNING, E.FINISHED):
        t = advance(t, nxt)


@pytest.mark.parametrize("a,b", [(J.FINISHED, J.RUNNING), (J.CANCELED, J.RESTARTING), (J.CREATED, J.FINISHED),
                                 (E.FINISHED, E.RUNNING), (E.CANCELED, E.FAILED), (E.CREATED, E.RUNNING)])
def test_illegal_moves_raise(a, b):
    with pytest.raises(IllegalTransition, match=f"from {a.value} to {b.value}"):
        advance(a, b)
