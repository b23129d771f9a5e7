"""The control channel: one WebSocket per TaskManager, carrying runtime.messages both ways.

Incoming messages are routed by a table (runtime.routing) to the ResourceManager (registration,
heartbeats, slot offers) or to the JobMaster of the job they name (task states, metrics, results,
checkpoint acks, and push source fetches, answered on the same connection). The socket holds only the
gateways it needs (:class:`ControlGateways`), never the JobManager. A message that does not decode is
logged and answered with nothing; it never closes other connections.
"""
from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import tornado.websocket

from runtime import events
from runtime.codec import WireError, encode, to_plain
from runtime.ids import JobId, LeaderSessionId
from runtime.jobmanager.gateways import JobMasterGateway, ResourceManagerGateway
from runtime.messages import (AcknowledgeCheckpoint, CollectResult, DeclineCheckpoint, Disconnect, Envelope,
                              FetchPushedRows, Heartbeat, HeartbeatAck, PushedRows, RegisterTaskManager,
                              RegistrationAccepted, RegistrationRejected, SlotOffer, TaskManagerStatus, TaskMetrics,
                              TaskStateChanged)
from runtime.routing import MessageRoutes, read_envelope
from runtime.security import bearer, tokens_match

log = logging.getLogger(__name__)

#: the JobMaster's entry for each report a TaskManager makes about one of its job's attempts
TO_JOB_MASTER: dict[type, Callable[[JobMasterGateway, Any], None]] = {
    TaskStateChanged: lambda master, m: master.update_task_execution_state(m),
    TaskMetrics: lambda master, m: master.report_task_metrics(m),
    CollectResult: lambda master, m: master.deliver_results(m),
    AcknowledgeCheckpoint: lambda master, m: master.acknowledge_checkpoint(m),
    DeclineCheckpoint: lambda master, m: master.decline_checkpoint(m),
}


class Leadership(Protocol):
    """Whether this JobManager leads, and the fencing token its messages carry while it does."""

    @property
    def is_leader(self) -> bool: ...

    @property
    def leader_session_id(self) -> LeaderSessionId | None: ...


@dataclass(frozen=True)
class ControlGateways:
    """What a control connection reaches on the JobManager's side."""
    resource_manager: ResourceManagerGateway
    job_master: Callable[[JobId], JobMasterGateway | None]  # None for a job this JobManager does not run
    publish: Callable[[Any], object]  # an event to the event stream
    leadership: Leadership
    token: str
    needs_client_certificate: bool  # internal TLS: a TaskManager shows the cluster's certificate


class ControlSocket(tornado.websocket.WebSocketHandler):
    """JobManager end of a TaskManager's control connection (its ControlConnection): reports go to the
    ResourceManager's and JobMasters' gateways."""

    def initialize(self, gateways: ControlGateways) -> None:
        self.gateways = gateways
        self.tm_id = None
        self._closed = False
        self.routes = MessageRoutes({
            Heartbeat: self._heartbeat,
            SlotOffer: lambda offer: gateways.resource_manager.offer_received(self.tm_id, offer),
            **{kind: self._to_job_master for kind in TO_JOB_MASTER},
            FetchPushedRows: lambda fetch: self.send(self._pushed_rows(fetch)),
            Disconnect: lambda bye: gateways.resource_manager.deregister(self.tm_id, self, bye.reason),  # leaves on purpose
            TaskManagerStatus: self._status,
        }, lambda: self.tm_id)

    def _status(self, status: TaskManagerStatus) -> None:
        """What the TaskManager says about itself: kept for its REST views, and to the event stream."""
        self.gateways.resource_manager.status_reported(self.tm_id, status)
        self.gateways.publish(events.TaskManagerStatusReported(self.tm_id, status))

    def check_origin(self, origin: str) -> bool:
        return True

    async def get(self, *args, **kwargs):
        if not tokens_match(self.gateways.token, bearer(self.request.headers.get("Authorization"))):
            self.set_status(401)
            self.finish(json.dumps({"errors": ["missing or invalid cluster token"]}))
            return
        if self.gateways.needs_client_certificate and not self.request.get_ssl_certificate():
            # the REST port's TLS checked any certificate offered against the internal CA; none was offered
            self.set_status(403)
            self.finish(json.dumps({"errors": ["the control connection needs the cluster's internal certificate "
                                               "(security.ssl.internal.cert and .key on the TaskManager)"]}))
            return
        await super().get(*args, **kwargs)

    # -- ControlConnection --------------------------------------------------------------------
    def send(self, message) -> None:
        if self._closed:
            return
        try:
            self.write_message(encode(Envelope(self.gateways.leadership.leader_session_id, to_plain(message))))
        except tornado.websocket.WebSocketClosedError:
            self._closed = True

    def close(self, code_or_reason=None, reason: str | None = None) -> None:  # type: ignore[override]
        if isinstance(code_or_reason, str):
            self.send(Disconnect(code_or_reason))
            code_or_reason, reason = 1000, code_or_reason[:120]
        self._closed = True
        super().close(code_or_reason, reason)

    # -- incoming -----------------------------------------------------------------------------
    def on_message(self, raw):
        try:
            _, message = read_envelope(raw)
        except WireError as err:
            log.warning("bad control message from %s: %s", self.tm_id or self.request.remote_ip, err)
            return
        try:
            if isinstance(message, RegisterTaskManager):
                self._register(message)
            elif self.tm_id is None:
                self.send(RegistrationRejected("register before sending other messages"))
            else:
                self.routes.dispatch(message)
        except Exception:  # noqa: BLE001 - one bad message must not end the connection
            log.exception("failed to handle %s from %s", type(message).__name__, self.tm_id)

    def _register(self, message: RegisterTaskManager) -> None:
        leadership, rm = self.gateways.leadership, self.gateways.resource_manager
        if not leadership.is_leader:
            self.send(RegistrationRejected("this JobManager is not the leader"))
            return
        self.tm_id = message.tm_id
        rm.register(message, self)
        self.send(RegistrationAccepted(message.tm_id, leadership.leader_session_id, rm.heartbeat_interval,
                                       rm.heartbeat_timeout))

    def _heartbeat(self, message: Heartbeat) -> None:
        if self.gateways.resource_manager.heartbeat(message.tm_id, message.slot_report, message.ready):
            self.send(HeartbeatAck(message.tm_id))  # every accepted one: the TaskManager pairs answers in order
        else:
            self.send(RegistrationRejected(f"{message.tm_id} is not registered; register again"))

    def _to_job_master(self, message) -> None:
        master = self.gateways.job_master(message.job_id)
        if master is not None:
            TO_JOB_MASTER[type(message)](master, message)

    def _pushed_rows(self, message: FetchPushedRows) -> PushedRows:
        """A push source subtask's next rows, answered on this connection (the task waits for them)."""
        master = self.gateways.job_master(message.job_id)
        if master is None:
            return PushedRows(message.request_id, error=f"job {message.job_id} is not known to this JobManager")
        return master.fetch_pushed_rows(message)

    def on_close(self):
        self._closed = True
        if self.tm_id:
            self.gateways.resource_manager.connection_closed(self.tm_id, self)
