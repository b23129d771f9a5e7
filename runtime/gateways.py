"""The gateway to a TaskManager as the JobManager's roles see it (Flink's TaskExecutorGateway).

It sits below both the JobManager's roles (runtime.jobmanager) and the checkpoint coordinator
(runtime.checkpoint), which both reach TaskManagers through it; the ResourceManager hands one out
with every allocated slot. The gateways between the JobManager's own roles are in
runtime.jobmanager.gateways.
"""
from __future__ import annotations

from typing import Protocol

from runtime.errors import ClusterError
from runtime.ids import ExecutionAttemptId, TaskManagerId
from runtime.messages import (NotifyCheckpointAborted, NotifyCheckpointComplete, TaskDeploymentDescriptor,
                              TriggerCheckpoint)


class TaskManagerGone(ClusterError):
    """The TaskManager behind a gateway left the ResourceManager's table: nothing reaches it any more."""


class TaskExecutorGateway(Protocol):
    """What a JobMaster asks of the TaskManager holding one of its slots (Flink's TaskExecutorGateway).

    Each call is one message on the control connection, answered later by the TaskManager's own
    reports (task states, checkpoint acknowledgements). Every call raises TaskManagerGone once that
    TaskManager has been declared lost or has registered anew."""

    @property
    def tm_id(self) -> TaskManagerId: ...

    def submit_task(self, descriptor: TaskDeploymentDescriptor) -> None: ...

    def cancel_task(self, attempt_id: ExecutionAttemptId) -> None: ...

    def trigger_checkpoint(self, message: TriggerCheckpoint) -> None: ...

    def confirm_checkpoint(self, message: NotifyCheckpointComplete) -> None: ...

    def abort_checkpoint(self, message: NotifyCheckpointAborted) -> None: ...
