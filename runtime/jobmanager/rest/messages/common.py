"""Errors, asynchronous operations (trigger, poll) and request bodies."""
from __future__ import annotations

from typing import Any

from runtime.jobmanager.rest.fields import F, RawJson, message


# -- errors and asynchronous operations ------------------------------------------------------
@message
class ErrorResponseBody:
    """Every error: what went wrong, in words; a standby's refusal also names the leader."""
    errors: list[str] = F("errors")
    leader: str | None = F("leader", default=None, doc="a standby JobManager's pointer to the leader's REST address",
                           omit_none=True)


@message
class TriggerResponse:
    request_id: str = F("request-id", doc="32 hex digits; poll the operation's status with it")


@message
class QueueStatus:
    id: str = F("id", doc="IN_PROGRESS or COMPLETED")


@message
class SerializedThrowable:
    """Why an operation failed (Flink sends a Java-serialized exception; here its text)."""
    cls: str = F("class")
    stack_trace: str = F("stack-trace")


@message
class SavepointInfo:
    location: str | None = F("location", default=None, omit_none=True)
    failure_cause: SerializedThrowable | None = F("failure-cause", default=None, omit_none=True)


@message
class SavepointOperationResult:
    status: QueueStatus = F("status")
    operation: SavepointInfo | None = F("operation", default=None, omit_none=True)


@message
class CheckpointInfo:
    checkpoint_id: int | None = F("checkpointId", default=None, omit_none=True)
    failure_cause: SerializedThrowable | None = F("failureCause", default=None, omit_none=True)


@message
class CheckpointOperationResult:
    status: QueueStatus = F("status")
    operation: CheckpointInfo | None = F("operation", default=None, omit_none=True)


@message
class AsynchronousOperationInfo:
    failure_cause: SerializedThrowable | None = F("failure-cause", default=None, omit_none=True)


@message
class AsynchronousOperationResult:
    status: QueueStatus = F("status")
    operation: AsynchronousOperationInfo | None = F("operation", default=None, omit_none=True)


# -- requests --------------------------------------------------------------------------------
@message
class SavepointTriggerRequestBody:
    target_directory: str | None = F("target-directory", default=None)
    cancel_job: bool = F("cancel-job", default=False)
    trigger_id: str | None = F("triggerId", default=None, doc="accepted and ignored: the JobManager picks the id")
    format_type: str | None = F("formatType", default=None, doc="CANONICAL (the only format written)")


@message
class StopWithSavepointRequestBody:
    target_directory: str | None = F("targetDirectory", default=None)
    drain: bool = F("drain", default=False, doc="emit a final watermark of +infinity first, so every window fires")
    trigger_id: str | None = F("triggerId", default=None)
    format_type: str | None = F("formatType", default=None)


@message
class CheckpointTriggerRequestBody:
    checkpoint_type: str | None = F("checkpointType", default=None,
                                 doc="CONFIGURED or INCREMENTAL: as execution.checkpointing.incremental says; FULL: "
                                     "every key group uploaded, no file of an earlier checkpoint referred to")
    trigger_id: str | None = F("triggerId", default=None)


@message
class SavepointDisposalRequest:
    savepoint_path: str = F("savepoint-path")


@message
class JobSubmitRequestBody:
    """Flinkbench's submission: the JSON form of runtime.jobgraph.JobGraph."""
    job_graph: RawJson = F("job_graph")
    job_id: str | None = F("job_id", default=None, doc="the client's own 32-hex-digit id for the job")


@message
class PushRowsRequestBody:
    """One of ``rows`` or ``arrow``."""
    rows: list[Any] | None = F("rows", default=None, doc="one JSON object per row")
    arrow: str | None = F("arrow", default=None, doc="a base64 Arrow IPC stream")
    push_id: str | None = F("push_id", default=None, doc="the client's id of this push: a retry is taken once")
