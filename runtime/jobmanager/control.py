"""The control channel: one WebSocket per TaskManager, carrying runtime.messages both ways.

Incoming messages are routed to the ResourceManager (registration, heartbeats, slot offers) or to
the JobMaster of the job they name (task states, metrics, results, checkpoint acks, and push source
fetches, answered on the same connection). A message that does not decode is logged and answered
with nothing; it never closes other connections.
"""
from __future__ import annotations

import json
import logging

import tornado.websocket

from runtime import events, tls
from runtime.codec import WireError, decode, encode, from_plain, to_plain
from runtime.messages import (AcknowledgeCheckpoint, CollectResult, DeclineCheckpoint, Disconnect, Envelope,
                              FetchPushedRows, Heartbeat, HeartbeatAck, PushedRows, RegisterTaskManager,
                              RegistrationAccepted, RegistrationRejected, SlotOffer, TaskManagerStatus, TaskMetrics,
                              TaskStateChanged)
from runtime.security import bearer, tokens_match

log = logging.getLogger(__name__)


class ControlSocket(tornado.websocket.WebSocketHandler):
    """JobManager end of a TaskManager's control connection (its ControlConnection): reports go to the
    ResourceManager's and JobMasters' gateways."""

    def initialize(self, jm) -> None:
        self.jm = jm
        self.tm_id = None
        self._closed = False

    def check_origin(self, origin: str) -> bool:
        return True

    async def get(self, *args, **kwargs):
        if not tokens_match(self.jm.token, bearer(self.request.headers.get("Authorization"))):
            self.set_status(401)
            self.finish(json.dumps({"errors": ["missing or invalid cluster token"]}))
            return
        if tls.enabled(self.jm.conf, tls.INTERNAL) and not self.request.get_ssl_certificate():
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
            self.write_message(encode(Envelope(self.jm.leader_session_id, to_plain(message))))
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
            envelope = decode(raw, Envelope)
            message = from_plain(envelope.body)
        except WireError as err:
            log.warning("bad control message from %s: %s", self.tm_id or self.request.remote_ip, err)
            return
        try:
            self._route(message)
        except Exception:  # noqa: BLE001 - one bad message must not end the connection
            log.exception("failed to handle %s from %s", type(message).__name__, self.tm_id)

    def _route(self, message) -> None:
        rm = self.jm.rm
        if isinstance(message, RegisterTaskManager):
            self._register(message)
        elif self.tm_id is None:
            self.send(RegistrationRejected("register before sending other messages"))
        elif isinstance(message, Heartbeat):
            if rm.heartbeat(message.tm_id, message.slot_report, message.ready):
                self.send(HeartbeatAck(message.tm_id))  # every accepted one: the TaskManager pairs answers in order
            else:
                self.send(RegistrationRejected(f"{message.tm_id} is not registered; register again"))
        elif isinstance(message, SlotOffer):
            rm.offer_received(self.tm_id, message)
        elif isinstance(message, (TaskStateChanged, TaskMetrics, CollectResult, AcknowledgeCheckpoint,
                                  DeclineCheckpoint)):
            self._to_job_master(message)
        elif isinstance(message, FetchPushedRows):
            self.send(self._pushed_rows(message))
        elif isinstance(message, Disconnect):  # the TaskManager leaves on purpose
            rm.deregister(self.tm_id, self, message.reason)
        elif isinstance(message, TaskManagerStatus):
            self.jm.bus.publish(events.TaskManagerStatusReported(self.tm_id, message))
        else:
            log.warning("unexpected control message %s from %s", type(message).__name__, self.tm_id)

    def _register(self, message: RegisterTaskManager) -> None:
        if not self.jm.is_leader:
            self.send(RegistrationRejected("this JobManager is not the leader"))
            return
        self.tm_id = message.tm_id
        self.jm.rm.register(message, self)
        self.send(RegistrationAccepted(message.tm_id, self.jm.leader_session_id,
                                       self.jm.rm.heartbeat_interval, self.jm.rm.heartbeat_timeout))

    def _to_job_master(self, message) -> None:
        master = self.jm.dispatcher.job_master(message.job_id)
        if master is None:
            return
        if isinstance(message, TaskStateChanged):
            master.update_task_execution_state(message)
        elif isinstance(message, TaskMetrics):
            master.report_task_metrics(message)
        elif isinstance(message, CollectResult):
            master.deliver_results(message)
        elif isinstance(message, AcknowledgeCheckpoint):
            master.acknowledge_checkpoint(message)
        else:
            master.decline_checkpoint(message)

    def _pushed_rows(self, message: FetchPushedRows) -> PushedRows:
        """A push source subtask's next rows, answered on this connection (the task waits for them)."""
        master = self.jm.dispatcher.job_master(message.job_id)
        if master is None:
            return PushedRows(message.request_id, error=f"job {message.job_id} is not known to this JobManager")
        return master.fetch_pushed_rows(message)

    def on_close(self):
        self._closed = True
        if self.tm_id:
            self.jm.rm.connection_closed(self.tm_id, self)
