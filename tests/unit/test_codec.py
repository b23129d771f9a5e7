import pytest

from runtime.codec import WireError, decode, encode
from runtime.ids import AllocationId, JobId, TaskManagerId
from runtime.jobgraph import OperatorSpec
from runtime.messages import (DeployTask, Envelope, Heartbeat, SlotStatus, TaskDeploymentDescriptor,
                              TaskStateChanged)
from runtime.states import ExecutionState


def test_nested_messages_round_trip_with_their_types():
    tdd = TaskDeploymentDescriptor(JobId.new(), "j", "v", "t", "a", 0, 1, 2, 128, AllocationId.new(),
                                   [OperatorSpec("o", "op", "map", 2, {"x": [1, 2]}, None)])
    back = decode(encode(DeployTask(tdd)))
    assert isinstance(back, DeployTask)
    assert back.descriptor.operators[0].params == {"x": [1, 2]}
    assert isinstance(back.descriptor.job_id, JobId)
    hb = decode(encode(Heartbeat(TaskManagerId("tm-1"), [SlotStatus(0, AllocationId("a"), JobId("j"))])))
    assert isinstance(hb.slot_report[0], SlotStatus) and hb.slot_report[0].job_id == "j"


@pytest.mark.parametrize("raw,message", [
    ("not json", "not valid JSON"),
    ('{"no": "type"}', "'type' field"),
    ('{"type": "Nope"}', "unknown message type 'Nope'"),
    ('{"type": "TaskStateChanged", "job_id": "j"}', "missing field 'attempt_id'"),
    ('{"type": "SlotStatus", "index": "zero"}', "expected int"),
])
def test_malformed_messages_raise_wire_errors(raw, message):
    with pytest.raises(WireError, match=message):
        decode(raw)


def test_expected_type_is_enforced():
    with pytest.raises(WireError, match="expected a Envelope"):
        decode(encode(TaskStateChanged("j", "a", ExecutionState.RUNNING)), Envelope)


def test_task_states_travel_as_execution_states():
    sent = TaskStateChanged("j", "a", ExecutionState.FAILED, "boom")
    assert encode(sent).count('"state":"FAILED"') == 1
    received = decode(encode(sent))
    assert received == sent and received.state is ExecutionState.FAILED
    with pytest.raises(WireError, match="TaskStateChanged.state: 'SLEEPING' is not a ExecutionState"):
        decode(encode(sent).replace('"FAILED"', '"SLEEPING"', 1))
