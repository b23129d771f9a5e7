"""The TaskExecutorGateway of one TaskManager registration: how a JobMaster reaches a TaskManager.

A JobMaster holds one per allocated slot. Messages go out on the registration's control connection while
the ResourceManager still holds that registration, and raise TaskManagerGone after, so a JobMaster never
talks to a TaskManager that was declared lost or registered anew.
"""
from __future__ import annotations

from collections.abc import Callable

from runtime.gateways import TaskManagerGone
from runtime.ids import TaskManagerId
from runtime.jobmanager.slot_table import TaskManagerRecord
from runtime.messages import (CancelTask, DeployTask, NotifyCheckpointAborted, NotifyCheckpointComplete,
                              TaskDeploymentDescriptor, TriggerCheckpoint)


class TaskExecutor:
    """Sends a JobMaster's messages to one registration of a TaskManager; ``held`` says whether the
    ResourceManager still holds that registration."""

    def __init__(self, record: TaskManagerRecord, held: Callable[[TaskManagerRecord], bool]):
        self._record, self._held = record, held

    @property
    def tm_id(self) -> TaskManagerId:
        return self._record.tm_id

    def _send(self, message) -> None:
        if not self._held(self._record):
            raise TaskManagerGone(f"TaskManager {self._record.tm_id} is gone")
        self._record.connection.send(message)

    def submit_task(self, descriptor: TaskDeploymentDescriptor) -> None:
        self._send(DeployTask(descriptor))

    def cancel_task(self, attempt_id) -> None:
        self._send(CancelTask(attempt_id))

    def trigger_checkpoint(self, message: TriggerCheckpoint) -> None:
        self._send(message)

    def confirm_checkpoint(self, message: NotifyCheckpointComplete) -> None:
        self._send(message)

    def abort_checkpoint(self, message: NotifyCheckpointAborted) -> None:
        self._send(message)
