"""``dashboard`` (and ``kernel/<id>/dashboard``): the JobManager's web dashboard, opened logged in.

A browser page, not an API: the panel's Dashboard button and the link ``%flink local`` prints lead here.
Behind Jupyter's own login (a browser without it is sent to Jupyter's login page), the server asks the
JobManager for a one-time login link (``POST /login-links``, runtime.jobmanager.logins) and redirects
the browser to it: the JobManager sets its HTTP-only cookie and shows the page. The token never reaches
the browser's scripts, and a link printed in a notebook stays good for as long as its cluster runs,
since each click asks for a fresh code. Query arguments (``?job=<id>``, ``?page=jobs``) name the page.
"""
from __future__ import annotations

import json
from urllib.parse import urlencode

import tornado.web
from jupyter_server.base.handlers import JupyterHandler

from kernel_magics.server.handlers import ScopedConnection, _errors, call_jobmanager


class DashboardHandler(ScopedConnection, JupyterHandler):
    """Errors (the cluster stopped, the JobManager is down) are Jupyter's HTML error page with the reason."""

    @tornado.web.authenticated
    async def get(self, kernel: str | None = None):
        page = {k: self.get_query_argument(k) for k in ("job", "page", "tab", "taskmanager")
                if self.get_query_argument(k, None)}
        body = json.dumps({"next": "/dashboard" + ("?" + urlencode(page) if page else "")}).encode()
        response = await call_jobmanager(self.target(kernel), "login-links", self.settings["flinkbench_request_timeout"],
                                         "POST", body, "application/json")
        if response.code != 201:
            raise tornado.web.HTTPError(502, f"the JobManager gave no dashboard link: {_errors(response.body)}")
        self.set_header("Cache-Control", "no-store")
        self.redirect(json.loads(response.body)["url"])
