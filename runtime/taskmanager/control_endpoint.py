"""A TaskManager's end of the control channel: its connection to the leading JobManager.

The endpoint owns the transport (a WebSocket to ``/control``), connecting again after a drop, watching
the HA leader, heartbeats, request/reply and the fencing of what arrives; the TaskManager role
(runtime.taskmanager.task_manager) sees it as a :class:`~runtime.taskmanager.services.JobManagerLink`
and hands it a :class:`ControlledRole`: what to register and heartbeat with, and a table of the
messages it handles (runtime.routing).

A connection's life::

    leader's address (HA services, else the --jobmanager URL)
      -> connect, send RegisterTaskManager
           -> RegistrationAccepted: follow this leader session; messages queued meanwhile go out
              -> serve: heartbeats; route the JobManager's messages; drop those of another session
      <- the socket closes, RegistrationRejected, Disconnect, or another JobManager leads
         (left at once: a paused JobManager would not answer a polite close)
    connection lost: the role cancels its tasks, frees its slots; requests waiting fail;
    after taskmanager.registration.retry-delay, again from the top

Everything runs on the TaskManager's loop; :meth:`ControlEndpoint.request_blocking` is for worker threads.
"""
from __future__ import annotations

import asyncio
import collections
import itertools
import logging
import os
from collections.abc import Callable, Mapping
from typing import Any, Protocol

import tornado.httpclient
import tornado.websocket

from runtime import tls
from runtime.child_process import jobmanager_url_from
from runtime.codec import WireError, encode, to_plain
from runtime.config import ConfigError, Configuration
from runtime.ha.services import HaServices
from runtime.ids import LeaderSessionId
from runtime.messages import (Disconnect, Envelope, Heartbeat, HeartbeatAck, PushedRows, RegisterTaskManager,
                              RegistrationAccepted, RegistrationRejected, TaskManagerStatus)
from runtime.routing import MessageRoutes, read_envelope
from runtime.taskmanager.heartbeat_lease import HeartbeatLease
from runtime.taskmanager.services import REQUEST_TIMEOUT_S

log = logging.getLogger(__name__)

PENDING_LIMIT = 10_000
STATUS_EVERY_S = 5.0  # how often memory and recent log lines go to the JobManager (its dashboard page)


class ControlledRole(Protocol):
    """What the endpoint asks of the TaskManager it connects."""

    def registration(self) -> RegisterTaskManager: ...

    def heartbeat(self) -> Heartbeat: ...

    def status(self) -> TaskManagerStatus: ...

    def routes(self) -> Mapping[type, Callable[[Any], None]]:
        """The JobManager's messages the role handles, by type."""
        ...

    def connection_lost(self) -> None:
        """No JobManager any more: running tasks can neither report nor checkpoint."""
        ...


class ControlEndpoint:
    """The TaskManager's control connection to the leading JobManager, kept up until :meth:`stop`."""

    def __init__(self, conf: Configuration, jobmanager_url: str | None, token: str, ha: HaServices | None,
                 jobmanager_ready_file: str | None = None):
        """``jobmanager_url`` None: read it from ``jobmanager_ready_file`` once the JobManager wrote it."""
        self.conf, self.token, self.ha = conf, token, ha
        self.bootstrap_url = self.jobmanager_url = (jobmanager_url or "").rstrip("/")
        self.jobmanager_ready_file = jobmanager_ready_file
        if self.bootstrap_url and tls.enabled(conf, tls.REST) and not self.bootstrap_url.startswith("https://"):
            raise ConfigError(f"config key 'security.ssl.rest.enabled' is true but the JobManager URL "
                              f"{self.bootstrap_url} is not https://")
        self.ssl = tls.rest_client_context(conf)  # verifies the JobManager; internal cert when on
        self.role: ControlledRole | None = None
        self.registered_as: object = None  # the TaskManager's id, as last registered
        self.routes = MessageRoutes({}, lambda: self.jobmanager_url)
        self.leader_session_id: LeaderSessionId | None = None
        self.heartbeats = HeartbeatLease()  # how long the leader has not heard us (snapshot uploads ask)
        self.loop: asyncio.AbstractEventLoop | None = None
        self._ws: tornado.websocket.WebSocketClientConnection | None = None
        self._pending: collections.deque = collections.deque(maxlen=PENDING_LIMIT)
        self._stopping = asyncio.Event()
        self._replies: dict[int, asyncio.Future] = {}  # request id -> the JobManager's answer
        self._request_ids = itertools.count(1)

    def serve(self, role: ControlledRole) -> None:
        """Connect ``role``: the messages it handles join the endpoint's own."""
        self.role = role
        self.routes = MessageRoutes({
            **role.routes(), PushedRows: self._settle, HeartbeatAck: lambda ack: None,
            RegistrationRejected: lambda m: self._leave(f"registration rejected: {m.reason}"),
            Disconnect: lambda m: self._leave(f"JobManager disconnected us: {m.reason}"),
        }, lambda: self.jobmanager_url)

    async def run(self) -> None:
        """Keep connected to the leading JobManager until :meth:`stop`."""
        self.loop = asyncio.get_running_loop()
        if self.jobmanager_ready_file and not self.bootstrap_url:  # started beside its JobManager (LocalCluster)
            self.bootstrap_url = self.jobmanager_url = await jobmanager_url_from(self.jobmanager_ready_file)
        while not self._stopping.is_set():
            try:
                self.jobmanager_url = await self._leader_url()
                await self._connect_and_serve()
            except (OSError, tornado.httpclient.HTTPClientError, tornado.websocket.WebSocketClosedError) as err:
                log.info("JobManager at %s not reachable: %s", self.jobmanager_url, err)
            self._connection_lost()
            try:
                await asyncio.wait_for(self._stopping.wait(), self.conf.get("taskmanager.registration.retry-delay"))
            except asyncio.TimeoutError:
                pass

    def stop(self) -> None:
        """Leave on purpose (the JobManager deregisters us: not a loss) and connect no more."""
        self._stopping.set()
        self._write(Disconnect(f"stopped (pid {os.getpid()})"))
        if self._ws:
            self._ws.close()

    # -- one connection -----------------------------------------------------------------------
    async def _connect_and_serve(self) -> None:
        url = self.jobmanager_url.replace("http://", "ws://").replace("https://", "wss://") + "/control"
        request = tornado.httpclient.HTTPRequest(url, headers={"Authorization": f"Bearer {self.token}"},
                                                 connect_timeout=5, request_timeout=5, ssl_options=self.ssl)
        self._ws = await tornado.websocket.websocket_connect(
            request, max_message_size=self.conf.get("rest.server.max-content-length"))
        if self.role is not None:
            registration = self.role.registration()
            self.registered_as = registration.tm_id
            self._write(registration)
        loop = asyncio.get_running_loop()
        reader, heartbeat = loop.create_task(self._read_messages(self._ws)), loop.create_task(self._heartbeat())
        ends = {reader} | ({loop.create_task(self._watch_leader())} if self.ha else set())
        try:
            done, _ = await asyncio.wait(ends, return_when=asyncio.FIRST_COMPLETED)
            if reader in done:
                reader.result()  # the connection closed, or reading it raised
            for watcher in done - {reader}:
                if watcher.exception() is not None:  # unforeseen: reconnect rather than follow a leader unwatched
                    log.warning("watching the leader failed: %s; reconnecting", watcher.exception())
        finally:
            for task in ends | {heartbeat}:
                task.cancel()
            self._ws = None
            self.leader_session_id = None

    async def _read_messages(self, ws) -> None:
        """Handle the JobManager's messages until it closes the connection."""
        while True:
            raw = await ws.read_message()
            if raw is None:
                return
            self._on_message(raw)

    async def _heartbeat(self) -> None:
        last_status = 0.0
        while True:
            await asyncio.sleep(self.conf.get("heartbeat.interval"))
            if self.leader_session_id is not None and self.role is not None:
                self._write(self.role.heartbeat())
                if asyncio.get_running_loop().time() - last_status >= STATUS_EVERY_S:
                    last_status = asyncio.get_running_loop().time()
                    self._write(self.role.status())

    def heartbeat_now(self) -> None:
        """A heartbeat at once, if registered (say, the Spark session came up: slot requests may wait for it)."""
        if self.leader_session_id is not None and self.role is not None:
            self._write(self.role.heartbeat())

    # -- the leader ---------------------------------------------------------------------------
    async def _leader_url(self) -> str:
        """The leading JobManager's address from the HA services; the bootstrap URL while none leads."""
        if self.ha is None:
            return self.bootstrap_url
        try:
            leader = await asyncio.get_running_loop().run_in_executor(None, self.ha.leader)
        except OSError as err:
            log.warning("cannot read the leader from the HA services: %s", err)
            leader = None
        return leader.address.rstrip("/") if leader else self.bootstrap_url

    async def _watch_leader(self) -> None:
        """Return, ending the connection, once another JobManager holds the leadership (the one we follow
        may be paused or cut off, so its socket alone would not tell us). The connection is left at once:
        closing it politely would wait up to 5 s for a paused JobManager to answer the close."""
        loop, ha = asyncio.get_running_loop(), self.ha
        if ha is None:
            return
        while True:
            await asyncio.sleep(self.conf.get("heartbeat.interval"))
            try:
                leader = await loop.run_in_executor(None, ha.leader)
            except OSError:
                continue
            if leader and self.leader_session_id is not None and leader.session_id != self.leader_session_id:
                log.warning("JobManager %s no longer leads (the leader is %s); reconnecting",
                            self.jobmanager_url, leader.address)
                if self._ws:
                    self._ws.close()
                return

    # -- sending and asking -------------------------------------------------------------------
    def _write(self, message) -> bool:
        if self._ws is None:
            return False
        try:
            self._ws.write_message(encode(Envelope(None, to_plain(message))))
            self.heartbeats.wrote(message)
            return True
        except tornado.websocket.WebSocketClosedError:
            return False

    def send(self, message) -> None:
        """Send to the JobManager, keeping the message for the next connection if there is none now."""
        if self.leader_session_id is None or not self._write(message):
            self._pending.append(message)

    async def request(self, message, timeout: float = REQUEST_TIMEOUT_S):
        """Send ``message`` (it has a ``request_id``, numbered here) and return the JobManager's reply with
        that id. ConnectionError when not connected, on a lost connection, or with no answer in time."""
        message.request_id = next(self._request_ids)
        reply = asyncio.get_running_loop().create_future()
        self._replies[message.request_id] = reply
        try:
            if self.leader_session_id is None or not self._write(message):
                raise ConnectionError(f"cannot send {type(message).__name__}: not connected to the JobManager")
            return await asyncio.wait_for(reply, timeout)
        except asyncio.TimeoutError:
            raise ConnectionError(f"the JobManager did not answer {type(message).__name__} "
                                  f"within {timeout:g} s") from None
        finally:
            self._replies.pop(message.request_id, None)

    def request_blocking(self, message, timeout: float = REQUEST_TIMEOUT_S):
        """:meth:`request` for connector code in a worker thread: blocks that thread, never the loop."""
        if self.loop is None:
            raise ConnectionError("the TaskManager is not running")
        return asyncio.run_coroutine_threadsafe(self.request(message, timeout), self.loop).result(timeout + 5)

    def _settle(self, reply) -> None:
        waiting = self._replies.get(reply.request_id)
        if waiting is not None and not waiting.done():
            waiting.set_result(reply)

    # -- receiving ----------------------------------------------------------------------------
    def _on_message(self, raw) -> None:
        try:
            envelope, message = read_envelope(raw)
        except WireError as err:
            log.warning("bad control message from the JobManager: %s", err)
            return
        self.heartbeats.received(message)
        if isinstance(message, RegistrationAccepted):
            self.leader_session_id = envelope.leader_session_id
            log.info("registered as %s with JobManager %s", self.registered_as, self.jobmanager_url)
            while self._pending:
                self._write(self._pending.popleft())
            return
        if envelope.leader_session_id != self.leader_session_id and not isinstance(message, RegistrationRejected):
            log.warning("dropping %s from a JobManager that is not our leader", type(message).__name__)
            return
        self.routes.dispatch(message)

    def _leave(self, why: str) -> None:
        log.warning("%s", why)
        if self._ws:
            self._ws.close()

    def _connection_lost(self) -> None:
        """Without a JobManager, running tasks cannot report or checkpoint: the role stops them."""
        if self.role is not None:
            self.role.connection_lost()
        self._pending.clear()
        for waiting in self._replies.values():
            if not waiting.done():
                waiting.set_exception(ConnectionError("lost the connection to the JobManager"))
