"""Routes under ``<base_url>/flinkbench/``: REST and event-stream forwarding, connection, local cluster.

Every verb carries ``@tornado.web.authenticated`` (WebSockets: ``@ws_authenticated``), so only a
logged-in Jupyter user reaches the JobManager through here; the cluster token is added on the way out
and nothing that comes back carries it. Errors are ``{"errors": [message]}`` like the JobManager's own:
502 when the JobManager cannot be reached or refuses the token, 503 when none is configured.
"""
from __future__ import annotations

import asyncio
import json
import logging
from urllib.parse import quote

import tornado.web
import tornado.websocket
from jupyter_server.auth.decorator import ws_authenticated
from jupyter_server.base.handlers import APIHandler, JupyterHandler
from jupyter_server.base.websocket import WebSocketMixin
from tornado.httpclient import AsyncHTTPClient, HTTPClientError, HTTPRequest

from kernel_magics.server.failover import find_leader, note_jobmanagers
from kernel_magics.server.local_cluster import LocalClusterError, LocalClusterManager
from kernel_magics.server.target import Connection, JobManagerTarget, TargetError

log = logging.getLogger(__name__)

# Only these come back from the JobManager: never its cookies or anything else it might set.
FORWARDED_RESPONSE_HEADERS = ("X-Next-Offset", "X-Finished", "X-Job-State")
LOCAL_CLUSTER_SOURCE = "local cluster"
CONNECT_TIMEOUT_S = 5.0


class FlinkbenchHandler(APIHandler):
    """Shared state and the JobManager-style error body."""

    @property
    def connection(self) -> Connection:
        return self.settings["flinkbench_connection"]

    @property
    def local_cluster(self) -> LocalClusterManager:
        return self.settings["flinkbench_local_cluster"]

    def target(self) -> JobManagerTarget:
        try:
            return self.connection.current()
        except TargetError as err:
            raise tornado.web.HTTPError(503, str(err)) from None

    def json_body(self) -> dict:
        try:
            data = json.loads(self.request.body or b"{}")
        except (ValueError, UnicodeDecodeError) as err:
            raise tornado.web.HTTPError(400, f"request body is not valid JSON: {err}") from None
        if not isinstance(data, dict):
            raise tornado.web.HTTPError(400, "request body must be a JSON object")
        return data

    def write_error(self, status_code: int, **kwargs) -> None:
        exc = kwargs.get("exc_info", (None, None, None))[1]
        message = exc.log_message if isinstance(exc, tornado.web.HTTPError) and exc.log_message else self._reason
        self.finish(json.dumps({"errors": [message]}))


def unreachable(target: JobManagerTarget, reason) -> tornado.web.HTTPError:
    return tornado.web.HTTPError(502, f"JobManager at {target.url} is unreachable: {reason}")


class ConnectionHandler(FlinkbenchHandler):
    """GET: the JobManager in use and the local cluster's state. POST {url, token_file}: use another."""

    @tornado.web.authenticated
    def get(self):
        self.finish(json.dumps(self.describe()))

    @tornado.web.authenticated
    def post(self):
        body = self.json_body()
        if not body.get("url"):
            self.connection.choose(None)
        else:
            try:
                target = JobManagerTarget.make(str(body["url"]), body.get("token_file") or None, "settings",
                                               body.get("trust_cert") or None)
                target.token()
                target.ssl_context()
            except TargetError as err:
                raise tornado.web.HTTPError(400, str(err)) from None
            self.connection.choose(target)
        self.finish(json.dumps(self.describe()))

    def describe(self) -> dict:
        return {**self.connection.describe(), "local_cluster": self.local_cluster.status()}


class ProxyHandler(FlinkbenchHandler):
    """``api/<path>`` -> ``<JobManager>/<path>`` with the same method, query and body, plus the token."""

    async def forward(self, path: str) -> None:
        target = self.target()
        try:
            token, context = target.token(), target.ssl_context()
        except TargetError as err:
            raise tornado.web.HTTPError(502, str(err)) from None
        url = f"{target.url}/{quote(path, safe='/:@-._~!$&()*+,;=')}"
        if self.request.query:
            url += "?" + self.request.query
        headers = {"Authorization": f"Bearer {token}", "Accept": "application/json"}
        if self.request.headers.get("Content-Type"):
            headers["Content-Type"] = self.request.headers["Content-Type"]
        method = self.request.method
        request = HTTPRequest(url, method=method, headers=headers,
                              body=self.request.body if method in ("POST", "PUT", "PATCH") else None,
                              allow_nonstandard_methods=True, follow_redirects=False,
                              connect_timeout=CONNECT_TIMEOUT_S, ssl_options=context,
                              request_timeout=self.settings["flinkbench_request_timeout"])
        try:
            response = await AsyncHTTPClient().fetch(request, raise_error=False)
        except (OSError, HTTPClientError) as err:
            raise unreachable(target, err) from None
        if response.code == 599:
            raise unreachable(target, response.error)
        if response.code == 401:
            raise tornado.web.HTTPError(502, f"the JobManager at {target.url} rejected the token from "
                                             f"{target.token_file}: {_errors(response.body)}")
        self.set_status(response.code, response.reason or "Unknown")
        for name in FORWARDED_RESPONSE_HEADERS:
            if name in response.headers:
                self.set_header(name, response.headers[name])
        self.finish(response.body or b"",
                    set_content_type=response.headers.get("Content-Type", "application/json"))

    @tornado.web.authenticated
    async def get(self, path):
        await self.forward(path)

    @tornado.web.authenticated
    async def post(self, path):
        await self.forward(path)

    @tornado.web.authenticated
    async def patch(self, path):
        await self.forward(path)

    @tornado.web.authenticated
    async def put(self, path):
        await self.forward(path)

    @tornado.web.authenticated
    async def delete(self, path):
        await self.forward(path)


def _errors(body: bytes | None) -> str:
    try:
        return "; ".join(json.loads(body or b"{}").get("errors") or []) or "no message"
    except (ValueError, AttributeError):
        return "no message"


class LocalClusterHandler(FlinkbenchHandler):
    """GET: state. POST {taskmanagers, slots, fault_injection}: start and connect to it. DELETE: stop."""

    @tornado.web.authenticated
    def get(self):
        self.finish(json.dumps(self.local_cluster.status()))

    @tornado.web.authenticated
    async def post(self):
        body = self.json_body()
        try:
            taskmanagers, slots = int(body.get("taskmanagers", 1)), int(body.get("slots", 2))
        except (TypeError, ValueError):
            raise tornado.web.HTTPError(400, "taskmanagers and slots must be integers") from None
        try:
            cluster = await self.local_cluster.start(taskmanagers, slots, bool(body.get("fault_injection", True)))
        except LocalClusterError as err:
            raise tornado.web.HTTPError(err.status, str(err)) from None
        self.connection.choose(JobManagerTarget.make(cluster.url, cluster.token_file, LOCAL_CLUSTER_SOURCE,
                                                     cluster.trust_cert))
        self.finish(json.dumps(self.local_cluster.status()))

    @tornado.web.authenticated
    async def delete(self):
        await self.local_cluster.stop()
        self.connection.forget(LOCAL_CLUSTER_SOURCE)
        self.finish(json.dumps(self.local_cluster.status()))


class EventsProxySocket(WebSocketMixin, tornado.websocket.WebSocketHandler, JupyterHandler):
    """The JobManager's ``/events`` stream, relayed message by message.

    When the JobManager cannot be reached, or drops the stream, the browser gets one
    ``{"type": "ProxyError", "message": ...}`` before the socket closes, so the panel can say why.
    """

    upstream: tornado.websocket.WebSocketClientConnection | None = None
    _pump: asyncio.Task | None = None

    @ws_authenticated
    async def get(self, *args, **kwargs):
        await super().get(*args, **kwargs)

    async def open(self, *args, **kwargs):
        super().open(*args, **kwargs)
        connection = self.settings["flinkbench_connection"]
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
            note_jobmanagers(self.settings["flinkbench_connection"], message)
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


def routes(prefix: str) -> list:
    """Every route of the extension; tests walk this list to check each one requires authentication."""
    from kernel_magics.server.graph import JobGraphHandler

    return [
        (rf"/{prefix}/graph/([^/]+)", JobGraphHandler),
        (rf"/{prefix}/connection", ConnectionHandler),
        (rf"/{prefix}/local-cluster", LocalClusterHandler),
        (rf"/{prefix}/events", EventsProxySocket),
        (rf"/{prefix}/api/(.*)", ProxyHandler),
    ]
