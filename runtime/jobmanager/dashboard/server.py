"""The dashboard's Bokeh server app: built at the first request for a dashboard page, so that a JobManager
nobody looks at never imports Bokeh (about 22 MB of its memory).

A ``BokehTornado`` application serving ``/dashboard`` and Bokeh's own static files; the JobManager's front
door (runtime.jobmanager.rest.gate) routes the dashboard's paths to it and everything else to the REST
application. Every browser tab gets its own Bokeh document, redrawn on the JobManager's loop.
"""
from __future__ import annotations

import tornado.web
from bokeh.application import Application
from bokeh.application.handlers.function import FunctionHandler
from bokeh.document import Document
from bokeh.server.auth_provider import AuthProvider
from bokeh.server.tornado import BokehTornado
from tornado.ioloop import IOLoop

from runtime import tls
from runtime.jobmanager.dashboard.class_page import UsersPage
from runtime.jobmanager.dashboard.job_page import JobPage
from runtime.jobmanager.dashboard.pages import (JobManagerPage, JobsPage, OverviewPage, Page, PageContext,
                                                TaskManagerPage, TaskManagersPage)
from runtime.jobmanager.dashboard.drilldown_page import DrilldownPage
from runtime.jobmanager.dashboard.savepoints_page import SavepointPage, SavepointsPage
from runtime.jobmanager.dashboard.source import RestSource
from runtime.jobmanager.rest import Authenticator
from runtime.process_info import LogTail
from runtime.security import COOKIE_NAME, bearer

PAGES: dict[str, type[Page]] = {"jobs": JobsPage, "taskmanagers": TaskManagersPage, "jobmanager": JobManagerPage,
                                "savepoints": SavepointsPage,
                                "users": UsersPage}
REFRESH_MS = 250
REFUSED = ("401: missing or invalid token. Open {path}?token=<token> (the cluster's token file, or a user's "
           "token from 'flinkbench users add'), or send 'Authorization: Bearer <token>'.\n")


def presented(handler_or_request) -> str | None:
    """The token a dashboard request carries: bearer header, ``?token=``, or the cookie."""
    request = getattr(handler_or_request, "request", handler_or_request)
    query = request.arguments.get("token") if request.arguments else None
    from_query = query[0].decode() if query and isinstance(query[0], bytes) else (query[0] if query else None)
    cookie = request.cookies.get(COOKIE_NAME)
    cookie_value = getattr(cookie, "value", cookie)
    return bearer(request.headers.get("Authorization")) or from_query or cookie_value


class TokenAuth(AuthProvider):
    """Bokeh's authentication hook, answering 401 (not a login redirect) to a missing or wrong token."""

    def __init__(self, auth: Authenticator, path: str):
        self._auth, self._path = auth, path
        super().__init__()

    @property
    def get_user_async(self):
        return self._check

    @property
    def get_login_url(self):
        return lambda handler: self._path  # never used: _check answers before tornado would redirect

    async def _check(self, handler: tornado.web.RequestHandler) -> str:
        from_query = handler.get_query_argument("token", None)
        caller = self._auth.identify(presented(handler))
        if caller is None:
            handler.set_status(401)
            handler.set_header("Content-Type", "text/plain; charset=utf-8")
            raise tornado.web.Finish(REFUSED.format(path=self._path))
        if from_query:
            handler.set_cookie(COOKIE_NAME, from_query, httponly=True, samesite="Strict", path="/",
                               secure=handler.request.protocol == "https")
        return caller.name


class DashboardServer:
    """The Bokeh application of one JobManager's dashboard, started on the JobManager's loop."""

    def __init__(self, jm, model, logs, port: int, not_found: type[tornado.web.RequestHandler], path: str):
        """``path``: where the pages are served (runtime.jobmanager.dashboard.PATH)."""
        self.jm, self.model, self.logs = jm, model, logs
        hosts = {jm.conf.rest_address(), "127.0.0.1", "localhost"}
        self.app = BokehTornado(
            {path: Application(FunctionHandler(self._make_document))},
            extra_websocket_origins=[f"{host}:{port}" for host in sorted(hosts)],
            auth_provider=TokenAuth(jm.users, path),
            websocket_max_message_size_bytes=jm.conf.get("rest.server.max-content-length"),
            default_handler_class=not_found,
        )
        self.app.initialize(IOLoop.current())
        self.app.start()

    def stop(self) -> None:
        self.app.stop()

    def _make_document(self, doc: Document) -> None:
        """One browser tab: the page its query arguments name (the overview without any)."""
        request = doc.session_context.request if doc.session_context else None  # type: ignore[attr-defined]
        args = {k: (v[0].decode() if isinstance(v[0], bytes) else v[0]) for k, v in (request.arguments if request else {}).items()
                if v and k != "token"}
        token = presented(request) if request is not None else None
        caller = self.jm.users.identify(token) if token else None
        if caller is None:
            raise RuntimeError("a dashboard session without a known token")  # TokenAuth let none through
        model, release = self.jm.dashboard.model_for(caller)
        if doc.session_context is not None:
            doc.on_session_destroyed(lambda _context: release())
        source = RestSource(self.jm.url, token, tls.rest_client_context(self.jm.conf))
        ctx = PageContext(doc, source, model, self.jm.token_file if caller.admin else None,
                          self.logs if caller.admin else LogTail(), args, self.jm.cli_commands)
        page = page_for(ctx)
        doc.title = f"Flinkbench dashboard · {page.title}"
        doc.add_root(page.layout)
        doc.add_next_tick_callback(page.refresh)
        doc.add_periodic_callback(page.refresh, page.refresh_ms)
        page.tick()
        doc.add_periodic_callback(page.tick, REFRESH_MS)


def page_for(ctx: PageContext) -> Page:
    if ctx.args.get("job") and ctx.args.get("subtask"):
        return DrilldownPage(ctx)
    if ctx.args.get("job"):
        return JobPage(ctx)
    if ctx.args.get("taskmanager"):
        return TaskManagerPage(ctx)
    if ctx.args.get("savepoint"):
        return SavepointPage(ctx)
    return PAGES.get(ctx.args.get("page", ""), OverviewPage)(ctx)
