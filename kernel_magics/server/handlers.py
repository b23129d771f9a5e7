"""Handlers under ``<base_url>/flinkbench/``: REST forwarding, connection, local cluster, kernels' clusters.

Every verb carries ``@tornado.web.authenticated`` (WebSockets: ``@ws_authenticated``), so only a
logged-in Jupyter user reaches the JobManager through here; the cluster token is added on the way out
and nothing that comes back carries it. Errors are ``{"errors": [message]}`` like the JobManager's own:
502 when the JobManager cannot be reached or refuses the token, 503 when none is configured, 410 when
the cluster of the kernel asked for has stopped.

The forwarding routes come twice: ``api/...``, ``events``, ``graph/...`` and ``dashboard`` reach the
server's own JobManager (the panel's choice, or the server's default), and the same under
``kernel/<kernel id>/`` reach the cluster that kernel follows (kernel_magics.server.kernels): the panel
uses those for the notebook in focus.
"""
from __future__ import annotations

import json
import logging
from urllib.parse import quote

import tornado.web
from jupyter_server.base.handlers import APIHandler
from tornado.httpclient import AsyncHTTPClient, HTTPClientError, HTTPRequest, HTTPResponse

from kernel_magics.server.kernels import KernelCluster, KernelClusters
from kernel_magics.server.local_cluster import LocalClusterError, LocalClusterManager
from kernel_magics.server.target import Connection, JobManagerTarget, TargetError

log = logging.getLogger(__name__)

# Only these come back from the JobManager: never its cookies or anything else it might set.
FORWARDED_RESPONSE_HEADERS = ("X-Next-Offset", "X-Finished", "X-Job-State")
LOCAL_CLUSTER_SOURCE = "local cluster"
CONNECT_TIMEOUT_S = 5.0
KERNEL = r"kernel/(?P<kernel>[0-9a-f-]+)/"


class ScopedConnection:
    """For handlers of both route kinds: the Connection a request means (``kernel`` None: the server's own)."""

    settings: dict

    def connection_for(self, kernel: str | None) -> Connection:
        """Raises HTTPError: 404 for a kernel this server does not run, 410 for its stopped cluster, 503
        when it follows none."""
        if kernel is None:
            return self.settings["flinkbench_connection"]
        cluster = self.kernel_cluster(kernel)
        if cluster.state == "stopped":
            raise tornado.web.HTTPError(410, f"the cluster at {cluster.url} stopped: {cluster.reason}")
        try:
            return self.settings["flinkbench_kernels"].connection(kernel, cluster)
        except TargetError as err:
            raise tornado.web.HTTPError(503, str(err)) from None

    def kernel_cluster(self, kernel: str) -> KernelCluster:
        try:
            connection_file = self.settings["kernel_manager"].get_kernel(kernel).connection_file
        except (KeyError, tornado.web.HTTPError):  # Jupyter's kernel manager raises its own 404
            raise tornado.web.HTTPError(404, f"no kernel {kernel} runs on this Jupyter server") from None
        kernels: KernelClusters = self.settings["flinkbench_kernels"]
        return kernels.cluster_of(connection_file)

    def target(self, kernel: str | None = None) -> JobManagerTarget:
        try:
            return self.connection_for(kernel).current()
        except TargetError as err:
            raise tornado.web.HTTPError(503, str(err)) from None


class FlinkbenchHandler(ScopedConnection, APIHandler):
    """Shared state and the JobManager-style error body."""

    @property
    def connection(self) -> Connection:
        return self.settings["flinkbench_connection"]

    @property
    def local_cluster(self) -> LocalClusterManager:
        return self.settings["flinkbench_local_cluster"]

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


async def call_jobmanager(target: JobManagerTarget, path: str, timeout: float, method: str = "GET",
                          body: bytes | None = None, content_type: str | None = None) -> HTTPResponse:
    """One request to the JobManager (``path`` with its query) with the token added; HTTPError 502 when it
    cannot be reached or refuses the token. Any other answer is the caller's to read."""
    try:
        token, context = target.token(), target.ssl_context()
    except TargetError as err:
        raise tornado.web.HTTPError(502, str(err)) from None
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json"}
    if content_type:
        headers["Content-Type"] = content_type
    request = HTTPRequest(f"{target.url}/{path.lstrip('/')}", method=method, headers=headers, body=body,
                          allow_nonstandard_methods=True, follow_redirects=False, connect_timeout=CONNECT_TIMEOUT_S,
                          ssl_options=context, request_timeout=timeout)
    try:
        response = await AsyncHTTPClient().fetch(request, raise_error=False)
    except (OSError, HTTPClientError) as err:
        raise unreachable(target, err) from None
    if response.code == 599:
        raise unreachable(target, response.error)
    if response.code == 401:
        raise tornado.web.HTTPError(502, f"the JobManager at {target.url} rejected the token from "
                                         f"{target.token_file}: {_errors(response.body)}")
    return response


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


class KernelClusterHandler(FlinkbenchHandler):
    """GET ``kernel/<id>/cluster``: the cluster that kernel follows, for the panel: running, stopped or none."""

    @tornado.web.authenticated
    def get(self, kernel: str):
        cluster = self.kernel_cluster(kernel)
        self.finish(json.dumps({**cluster.describe(), "local_cluster": self.local_cluster.status()}))


class ProxyHandler(FlinkbenchHandler):
    """``api/<path>`` -> ``<JobManager>/<path>`` with the same method, query and body, plus the token."""

    async def forward(self, path: str, kernel: str | None) -> None:
        target = self.target(kernel)
        path = quote(path, safe="/:@-._~!$&()*+,;=") + ("?" + self.request.query if self.request.query else "")
        method = self.request.method or "GET"
        response = await call_jobmanager(target, path, self.settings["flinkbench_request_timeout"], method,
                                         self.request.body if method in ("POST", "PUT", "PATCH") else None,
                                         self.request.headers.get("Content-Type"))
        self.set_status(response.code, response.reason or "Unknown")
        for name in FORWARDED_RESPONSE_HEADERS:
            if name in response.headers:
                self.set_header(name, response.headers[name])
        self.finish(response.body or b"",
                    set_content_type=response.headers.get("Content-Type", "application/json"))

    @tornado.web.authenticated
    async def get(self, path, kernel=None):
        await self.forward(path, kernel)

    @tornado.web.authenticated
    async def post(self, path, kernel=None):
        await self.forward(path, kernel)

    @tornado.web.authenticated
    async def patch(self, path, kernel=None):
        await self.forward(path, kernel)

    @tornado.web.authenticated
    async def put(self, path, kernel=None):
        await self.forward(path, kernel)

    @tornado.web.authenticated
    async def delete(self, path, kernel=None):
        await self.forward(path, kernel)


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
