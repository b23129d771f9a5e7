"""The JobManager's front door: authenticate first, then route, then let handlers validate.

Every request goes through :class:`RestGate` before any handler sees it. Without a valid token the
answer is 401 with a JSON body, whatever the path (only ``/healthz`` and the dashboard's login page are
open), method, headers or body, so nothing about routes or job ids can be learnt without it; a browser
asking for a dashboard page is sent to the login page instead, which says how to get in. A valid token
names the caller: the cluster token is the admin's, a user's token (runtime.users) that user's; the caller
goes with the request to the handlers (runtime.jobmanager.rest.scope), and paths for the cluster's own
processes (the TaskManagers' control channel) take an admin's token only. Then: ``/v1/...`` is served as the bare
path; a body larger than ``rest.server.max-content-length`` is 413 (refused from its Content-Length
before it is read, or once a chunked body grows past the limit); a path that matches nothing is 404,
a WebSocket path without an upgrade 400, all with JSON bodies. Then the web dashboard's paths go to the
dashboard (runtime.jobmanager.dashboard, which starts its Bokeh app at the first of them) and everything
else to the REST application's own routing.
"""
from __future__ import annotations

import json
import re
from typing import Protocol

import tornado.httputil
import tornado.routing
import tornado.web

from runtime.jobmanager.rest.base import JsonErrors
from runtime.jobmanager.rest.scope import attach
from runtime.security import COOKIE_NAME, bearer
from runtime.users import Caller

V1 = "/v1"
#: pages of the web dashboard (Bokeh), which browsers open with ``?token=`` once and then carry a cookie
BROWSER_PREFIXES = ("/dashboard", "/static/", "/events")
SPARK_UI = re.compile(r"^/taskmanagers/[^/]+/spark-ui(/|$)")  # a TaskManager's Spark UI, also opened by browsers
TOKEN_MISSING = ("missing or invalid cluster token: send 'Authorization: Bearer <token>' (the token is in the "
                 "cluster's token file, or a user's own from 'flinkbench users add'); a browser opens /dashboard/login")


def presented_token(request: tornado.httputil.HTTPServerRequest) -> str | None:
    """The token a request carries: bearer header, the dashboard's cookie, or ``?token=`` on browser pages."""
    found = bearer(request.headers.get("Authorization"))
    if found:
        return found
    cookie = request.cookies.get(COOKIE_NAME)
    if cookie is not None:
        return cookie.value
    if request.path.startswith(BROWSER_PREFIXES) or SPARK_UI.match(request.path):
        values = tornado.httputil.parse_qs_bytes(request.query, keep_blank_values=True).get("token")
        return values[0].decode(errors="replace") if values else None
    return None


class Refusal(tornado.httputil.HTTPMessageDelegate):
    """Answers one request with a JSON error (or, given ``location``, a redirect there) and nothing else.
    A body it was sent is read and dropped (so the connection can carry the next request), unless it is
    too large to read at all."""

    def __init__(self, connection, status: int, message: str, read_body: bool = True, method: str = "GET",
                 location: str | None = None):
        self.connection, self.status, self.message, self.read_body = connection, status, message, read_body
        self.head, self.location = method == "HEAD", location

    def headers_received(self, start_line, headers):
        if not self.read_body:
            self._answer()

    def data_received(self, chunk):
        pass

    def finish(self):
        if self.read_body:
            self._answer()

    def on_connection_close(self):
        pass

    def _answer(self) -> None:
        body = json.dumps({"errors": [self.message]}).encode()
        headers = tornado.httputil.HTTPHeaders({"Content-Type": "application/json", "Content-Length": str(len(body))})
        if self.location is not None:
            headers["Location"] = self.location
        if not self.read_body:
            headers["Connection"] = "close"
        reason = tornado.httputil.responses.get(self.status, "Error")
        start = tornado.httputil.ResponseStartLine("HTTP/1.1", self.status, reason)
        self.connection.write_headers(start, headers, b"" if self.head else body)
        self.connection.finish()


class BodyLimit(tornado.httputil.HTTPMessageDelegate):
    """Passes a chunked request on to the application until its body grows past the limit; then 413."""

    def __init__(self, inner, connection, limit: int):
        self.inner, self.connection, self.limit, self.size = inner, connection, limit, 0
        self.refused: Refusal | None = None

    def headers_received(self, start_line, headers):
        return self.inner.headers_received(start_line, headers)

    def data_received(self, chunk):
        self.size += len(chunk)
        if self.refused is None and self.size > self.limit:
            self.refused = Refusal(self.connection, 413, too_large(self.limit), read_body=False)
            self.refused.headers_received(None, None)
        if self.refused is None:
            return self.inner.data_received(chunk)
        return None

    def finish(self):
        if self.refused is None:
            self.inner.finish()

    def on_connection_close(self):
        self.inner.on_connection_close()


def too_large(limit: int) -> str:
    return f"request body is larger than rest.server.max-content-length ({limit} bytes)"


class NotFoundHandler(JsonErrors, tornado.web.RequestHandler):
    """Whatever matched no route: 404 with a JSON body, for every method."""

    def prepare(self):
        raise tornado.web.HTTPError(404, f"no REST route {self.request.method} {self.request.path}; "
                                         "GET /v1/openapi.json lists them")


class Authenticator(Protocol):
    """Who a presented token names (runtime.jobmanager.user_registry); None for no known token."""

    def identify(self, token: str | None) -> Caller | None: ...


NOT_FOR_USERS = "{path} is for the cluster's own processes: it takes the cluster token, not a user's"


class Pages(Protocol):
    """Web pages served beside the REST API (the dashboard): which paths are theirs, which of them open
    without the token (a login page), where a browser without the token goes, and their handler."""

    def serves(self, path: str) -> bool: ...

    def open_without_token(self, path: str) -> bool: ...

    def login_redirect(self, request) -> str | None: ...

    def find_handler(self, request) -> tornado.httputil.HTTPMessageDelegate: ...


class RestGate(tornado.routing.Router):
    """Authenticate, strip ``/v1``, limit bodies, then hand the request to ``pages`` or ``app``."""

    def __init__(self, app: tornado.web.Application, auth: Authenticator, max_content_length: int,
                 open_paths: frozenset[str], websocket_paths: frozenset[str], pages: Pages | None = None,
                 admin_paths: frozenset[str] = frozenset()):
        self.app, self.auth, self.limit, self.pages = app, auth, max_content_length, pages
        self.open_paths, self.websocket_paths, self.admin_paths = open_paths, websocket_paths, admin_paths
        app.settings["default_handler_class"] = NotFoundHandler

    def find_handler(self, request, **kwargs):
        if request.path == V1 or request.path.startswith(V1 + "/"):
            request.path = request.path[len(V1):] or "/"
            request.uri = request.uri[len(V1):] or "/"
        connection = request.connection
        chunked = "chunked" in request.headers.get("Transfer-Encoding", "").lower()
        if not self._open(request.path):
            caller = self.auth.identify(presented_token(request))
            if caller is None:
                login = self.pages.login_redirect(request) if self.pages is not None else None
                return Refusal(connection, 302 if login else 401, TOKEN_MISSING,
                               not chunked and self._length(request) <= self.limit, request.method, login)
            if request.path in self.admin_paths and not caller.admin:
                return Refusal(connection, 403, NOT_FOR_USERS.format(path=request.path), True, request.method)
            attach(request, caller)
        if self._length(request) > self.limit:
            return Refusal(connection, 413, too_large(self.limit), False, request.method)
        if request.path in self.websocket_paths and request.headers.get("Upgrade", "").lower() != "websocket":
            return Refusal(connection, 400, f"{request.path} is a WebSocket: send a WebSocket upgrade request",
                           True, request.method)
        routed = self.pages if self.pages is not None and self.pages.serves(request.path) else self.app
        inner = routed.find_handler(request)
        return BodyLimit(inner, connection, self.limit) if chunked else inner

    def _open(self, path: str) -> bool:
        return path in self.open_paths or (self.pages is not None and self.pages.open_without_token(path))

    @staticmethod
    def _length(request) -> int:
        try:
            return int(request.headers.get("Content-Length", "0").split(",")[0].strip() or 0)
        except ValueError:
            return 0  # tornado itself refuses a Content-Length that is not a number
