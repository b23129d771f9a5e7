"""The JobManager's web dashboard: a Bokeh server app at ``/dashboard`` in the JobManager's own server.

The JobManager's front door (runtime.jobmanager.rest.gate) routes the dashboard's paths here and every
other path to the REST application, so the dashboard needs no second port. Its pages are the ones a
Flink user expects, each its own address: the overview (``/dashboard``), jobs (``?page=jobs``), a job
(``?job=<id>``, with ``&tab=graph|subtasks|checkpoints|exceptions|configuration``), TaskManagers
(``?page=taskmanagers``, ``?taskmanager=<id>``) and the JobManager (``?page=jobmanager``). Every browser
tab gets its own Bokeh document: what comes from REST is re-read every second through this JobManager's
own REST API (runtime.jobmanager.dashboard.source), and the live views (the job graph, slots, tasks,
checkpoints) are redrawn from one ClusterModel that listens to the JobManager's event bus in-process from
the JobManager's start: the same events the ``/events`` WebSocket sends. Everything runs on the
JobManager's loop.

Bokeh itself (runtime.jobmanager.dashboard.server) is imported at the first request for a dashboard
path: a JobManager nobody looks at keeps its 22 MB. That first page waits for the import (0.3 s here).

The page is behind the cluster token or a user's (runtime.users): ``/dashboard?token=<token>`` (which
also sets the token cookie for the page's own requests and WebSocket), the cookie, or ``Authorization:
Bearer``. A browser without any is sent to ``/dashboard/login`` (runtime.jobmanager.dashboard.login), which
says how to get in and redeems the one-time links the panel and ``%flink local`` hand out. A user's tab
reads REST with their own token and draws a model of their own, fed with the events they may see
(runtime.jobmanager.rest.scope); an admin's tab draws the shared one.
"""
from __future__ import annotations

import logging
import time

from collections.abc import Callable

import tornado.web

from runtime.jobmanager import rest
from runtime.jobmanager.dashboard.login import LoginHandler
from runtime.jobmanager.logins import DASHBOARD_PATH as PATH
from runtime.jobmanager.logins import LOGIN_PATH, LoginCodes, login_path
from runtime.jobmanager.rest.scope import ScopedGateway
from runtime.process_info import LogTail
from runtime.users import Caller
from runtime.views.model import ClusterModel

log = logging.getLogger(__name__)

#: what the Bokeh app serves besides its pages: its scripts and styles, and the browser's icon request
OWN_PREFIXES = (PATH, "/static/", "/favicon.ico")


class Dashboard:
    """The dashboard's model (fed from the event bus from the start) and, once asked for, its web app."""

    def __init__(self, jm, port: int, not_found: type, logins: LoginCodes):
        """``not_found`` answers a dashboard path that names no page (the REST API's JSON 404); ``logins``
        are the one-time codes the REST API issues and the login page redeems."""
        self.jm, self.port, self.not_found = jm, port, not_found
        self.login = tornado.web.Application([(LOGIN_PATH, LoginHandler, {"auth": jm.users, "logins": logins})],
                                             default_handler_class=not_found)
        self.model = ClusterModel()
        self.model.reset(jm.snapshot())
        self.model.set_connection("connected", jm.url, f"this JobManager ({jm.url})")
        jm.bus.add_listener(self.model.apply_safely)
        self.logs = LogTail()
        logging.getLogger().addHandler(self.logs)
        self._server = None

    @staticmethod
    def serves(path: str) -> bool:
        """True for the paths the Bokeh app answers (the front door sends everything else to REST)."""
        return path.startswith(OWN_PREFIXES)

    @staticmethod
    def open_without_token(path: str) -> bool:
        """The login page: it is how a browser without the token gets one."""
        return path == LOGIN_PATH

    @staticmethod
    def login_redirect(request) -> str | None:
        """Where a browser that asked for a dashboard page without the token goes: the login page, which
        says what to do, then back to the page asked for. None for anything but a browser's page request
        (API clients and the page's own scripts keep the JSON 401)."""
        wants_page = request.method in ("GET", "HEAD") and "text/html" in request.headers.get("Accept", "")
        if not wants_page or request.path not in ("/", PATH):
            return None
        query = "&".join(p for p in request.query.split("&") if p and not p.startswith("token="))
        return login_path(PATH + ("?" + query if query else ""))

    def find_handler(self, request):
        """Tornado's routing hook: the login page's handler, else the Bokeh app's (built at the first call)."""
        if request.path == LOGIN_PATH:
            return self.login.find_handler(request)
        if self._server is None:
            started = time.monotonic()
            from runtime.jobmanager.dashboard.server import DashboardServer

            self._server = DashboardServer(self.jm, self.model, self.logs, self.port, self.not_found, PATH)
            log.info("dashboard started in %.1f s", time.monotonic() - started)
        return self._server.app.find_handler(request)

    def model_for(self, caller: Caller) -> tuple[ClusterModel, Callable[[], None]]:
        """The model a tab of ``caller`` draws, and what to call when the tab closes: an admin's is the shared
        one; a user's starts from the cluster as they may see it and takes the events they may see."""
        if caller.admin:
            return self.model, lambda: None
        scope = ScopedGateway(self.jm.dispatcher, caller)
        model = ClusterModel()
        model.reset({**rest.cluster_snapshot(scope, self.jm, self.jm.bus.seq),
                     "resource-provider": self.jm.provider.describe()})
        model.set_connection("connected", self.jm.url, f"this JobManager ({self.jm.url}) as user '{caller.name}'")

        def feed(event: dict) -> None:
            visible = scope.event(event)
            if visible is not None:
                model.apply_safely(visible)
        self.jm.bus.add_listener(feed)
        return model, lambda: self.jm.bus.remove_listener(feed)

    def stop(self) -> None:
        logging.getLogger().removeHandler(self.logs)
        if self._server is not None:
            self._server.stop()
