"""``events`` (and ``kernel/<id>/events``): the JobManager's event stream, relayed to the panel.

The relay follows the leader (kernel_magics.server.failover): what the stream says about the cluster's
JobManagers is remembered on the connection it serves, and when the JobManager cannot be reached the
others are asked who leads now.
"""
from __future__ import annotations

import asyncio
import json

import tornado.web
import tornado.websocket
from jupyter_server.auth.decorator import ws_authenticated
from jupyter_server.base.handlers import JupyterHandler
from jupyter_server.base.websocket import WebSocketMixin
from tornado.httpclient import HTTPClientError, HTTPRequest

from kernel_magics.server.failover import find_leader, note_jobmanagers
from kernel_magics.server.handlers import CONNECT_TIMEOUT_S, ScopedConnection, unreachable
from kernel_magics.server.target import Connection, JobManagerTarget, TargetError


class EventsProxySocket(ScopedConnection, WebSocketMixin, tornado.websocket.WebSocketHandler, JupyterHandler):
    """The JobManager's ``/events`` stream, relayed message by message.

    When the JobManager cannot be reached, or drops the stream, the browser gets one
    ``{"type": "ProxyError", "message": ...}`` before the socket closes, so the panel can say why.
    """

    upstream: tornado.websocket.WebSocketClientConnection | None = None
    relayed: Connection
    _pump: asyncio.Task | None = None

    @ws_authenticated
    async def get(self, *args, **kwargs):
        await super().get(*args, **kwargs)

    async def open(self, *args, **kwargs):
        super().open(*args, **kwargs)
        try:
            connection = self.relayed = self.connection_for(kwargs.get("kernel"))
        except tornado.web.HTTPError as err:  # a kernel's cluster that stopped, or none: say so, then close
            self._fail(err.log_message or "no cluster")
            return
        try:
            target = connection.current()
            try:
                self.upstream = await self._connect(target)
            except (OSError, HTTPClientError, tornado.websocket.WebSocketError) as err:
                leader = await find_leader(connection)  # HA: the leader may have moved while we were away
                if leader is None:
                    raise err from None
                target = leader
                self.upstream = await self._connect(target)
        except TargetError as err:
            self._fail(str(err))
            return
        except (OSError, HTTPClientError, tornado.websocket.WebSocketError) as err:
            self._fail(str(unreachable(target, err).log_message))
            return
        self._pump = asyncio.get_running_loop().create_task(self._relay(target))

    @staticmethod
    async def _connect(target: JobManagerTarget):
        request = HTTPRequest(target.ws_url + "/events", headers={"Authorization": f"Bearer {target.token()}"},
                              connect_timeout=CONNECT_TIMEOUT_S, request_timeout=CONNECT_TIMEOUT_S,
                              ssl_options=target.ssl_context())
        return await tornado.websocket.websocket_connect(request)

    async def _relay(self, target: JobManagerTarget) -> None:
        while True:
            message = await self.upstream.read_message()
            if message is None:
                reason = self.upstream.close_reason or "connection lost"
                self._fail(f"JobManager at {target.url} closed the event stream: {reason}")
                return
            note_jobmanagers(self.relayed, message)
            try:
                await self.write_message(message)
            except tornado.websocket.WebSocketClosedError:
                return

    def _fail(self, message: str) -> None:
        try:
            self.write_message(json.dumps({"type": "ProxyError", "message": message}))
        except tornado.websocket.WebSocketClosedError:
            return
        self.close(1011, message[:120])

    def on_message(self, message):
        pass  # the stream is one-way

    def on_close(self):
        if self._pump is not None:
            self._pump.cancel()
        if self.upstream is not None:
            self.upstream.close()

