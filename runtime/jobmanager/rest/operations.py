"""REST handlers for checkpoints and savepoints: statistics, configuration, and the asynchronous
operations a client triggers and then polls by trigger id (savepoint, stop with savepoint, manual
checkpoint, savepoint disposal)."""
from __future__ import annotations

from runtime.jobmanager.rest import convert
from runtime.jobmanager.rest import messages as m
from runtime.jobmanager.rest.base import ApiHandler, HTTPError, operation
from runtime.snapshots import OperationStatus


def found(status: OperationStatus | None, what: str, trigger_id: str) -> OperationStatus:
    if status is None:
        raise HTTPError(404, f"{what} trigger {trigger_id} not found")
    return status


def target_of(path: str | None) -> str | None:
    if path is not None and not path.strip():
        raise HTTPError(400, "the target directory must not be empty")
    return path


class JobCheckpointsHandler(ApiHandler):
    @operation("Checkpoint counts, durations and sizes, the latest of each kind, and the recent history.",
               m.CheckpointingStatistics)
    def get(self, jobid):
        return convert.checkpoint_stats(self.gateway.checkpoint_stats(jobid))

    @operation("Take a checkpoint now, besides the periodic ones (Flink 1.19+); poll the request id.",
               m.TriggerResponse, status=202, request=m.CheckpointTriggerRequestBody)
    def post(self, jobid):
        body = self.body(m.CheckpointTriggerRequestBody)
        if body.checkpoint_type not in (None, "CONFIGURED", "FULL", "INCREMENTAL"):
            raise HTTPError(400, f"checkpointType must be CONFIGURED, FULL or INCREMENTAL, got {body.checkpoint_type!r}")
        return m.TriggerResponse(request_id=self.gateway.trigger_checkpoint(jobid, full=body.checkpoint_type == "FULL"))


class CheckpointStatusHandler(ApiHandler):
    @operation("A manual checkpoint's progress; once COMPLETED, its checkpoint id or why it failed.",
               m.CheckpointOperationResult)
    def get(self, jobid, triggerid):
        return convert.checkpoint_result(found(self.gateway.checkpoint_status(jobid, triggerid), "checkpoint", triggerid))


class JobCheckpointConfigHandler(ApiHandler):
    @operation("The job's checkpointing configuration.", m.CheckpointConfigInfo)
    def get(self, jobid):
        return convert.checkpoint_config(self.gateway.checkpoint_config(jobid))


class SavepointTriggerHandler(ApiHandler):
    @operation("Take a savepoint (and with cancel-job end the job after it); poll the request id.",
               m.TriggerResponse, status=202, request=m.SavepointTriggerRequestBody)
    def post(self, jobid):
        body = self.body(m.SavepointTriggerRequestBody)
        return m.TriggerResponse(request_id=self.gateway.trigger_savepoint(
            jobid, target_of(body.target_directory), body.cancel_job))


class StopHandler(ApiHandler):
    @operation("Stop the job with a savepoint; with drain, a final watermark of +infinity fires every window "
               "first. Poll the request id at /jobs/<id>/savepoints/<request-id>.",
               m.TriggerResponse, status=202, request=m.StopWithSavepointRequestBody)
    def post(self, jobid):
        body = self.body(m.StopWithSavepointRequestBody)
        return m.TriggerResponse(request_id=self.gateway.stop_with_savepoint(
            jobid, target_of(body.target_directory), body.drain))


class SavepointStatusHandler(ApiHandler):
    @operation("A savepoint's (or stop's) progress; once COMPLETED, its location or why it failed.",
               m.SavepointOperationResult)
    def get(self, jobid, triggerid):
        return convert.savepoint_result(found(self.gateway.savepoint_status(jobid, triggerid), "savepoint", triggerid))


class SavepointDisposalHandler(ApiHandler):
    @operation("Delete a savepoint (or retained checkpoint) directory; poll the request id.",
               m.TriggerResponse, status=200, request=m.SavepointDisposalRequest)
    def post(self):
        body = self.body(m.SavepointDisposalRequest)
        return m.TriggerResponse(request_id=self.gateway.dispose_savepoint(target_of(body.savepoint_path)))


class SavepointDisposalStatusHandler(ApiHandler):
    @operation("A savepoint disposal's progress; once COMPLETED, why it failed if it did.",
               m.AsynchronousOperationResult)
    def get(self, triggerid):
        return convert.disposal_result(found(self.gateway.disposal_status(triggerid), "savepoint disposal", triggerid))
