"""Each TaskManager's Spark UI through the Dispatcher: ``GET /taskmanagers/:taskmanagerid/spark-ui/...``.

A TaskManager whose Spark driver serves its web UI (``-D spark.ui.enabled=true``) says where in its status
reports; this path forwards GET requests to it, so the UI is reached where the REST API is, behind the same
cluster token and TLS (a browser opens it once with ``?token=``, then carries the dashboard's cookie). Spark
writes its links under the prefix the ``X-Forwarded-Context`` header names, so they come back here. Only GET
is forwarded: the UI is for reading (a TaskManager starts its driver with ``spark.ui.killEnabled=false``).
"""
from __future__ import annotations

import urllib.parse

from tornado.httpclient import AsyncHTTPClient, HTTPRequest

from runtime.jobmanager.rest.base import ApiHandler, HTTPError, operation
from runtime.security import COOKIE_NAME

PREFIX = "/taskmanagers/{}/spark-ui"
PASSED_HEADERS = ("Content-Type", "Location", "Cache-Control", "Content-Disposition")
TIMEOUT_S = 30.0


def proxy_path(tm_id: str) -> str:
    """Where a TaskManager's Spark UI is reached through the REST API (relative to its root)."""
    return PREFIX.format(tm_id) + "/"


class SparkUiProxyHandler(ApiHandler):
    admin_only = "a TaskManager's Spark UI (it shows every user's Spark work)"

    @operation("A TaskManager's Spark UI (its driver's web UI, when spark.ui.enabled), page by page.", str,
               media_type="text/html")
    async def get(self, taskmanagerid, path=""):
        target = self._target(taskmanagerid)
        query = [(k, v) for k, v in urllib.parse.parse_qsl(self.request.query, keep_blank_values=True) if k != "token"]
        url = f"{target}/{urllib.parse.quote(path, safe='/')}" + (f"?{urllib.parse.urlencode(query)}" if query else "")
        context = self.request.path[: self.request.path.index("/spark-ui") + len("/spark-ui")]
        response = await AsyncHTTPClient().fetch(HTTPRequest(
            url, headers={"X-Forwarded-Context": context}, follow_redirects=False, request_timeout=TIMEOUT_S),
            raise_error=False)
        if response.code == 599:
            raise HTTPError(502, f"the Spark UI of TaskManager {taskmanagerid} at {target} does not answer: {response.error}")
        self._remember_token()
        self.set_status(response.code)
        for name in PASSED_HEADERS:
            if name in response.headers:
                self.set_header(name, response.headers[name])
        self.finish(response.body or b"")

    def _target(self, tm_id: str) -> str:
        tm = self.gateway.request_task_manager(tm_id)
        found = tm.status.spark_ui if tm.status is not None else None
        if not found:
            raise HTTPError(404, f"TaskManager {tm_id} serves no Spark UI (yet): its Spark driver runs one with "
                                 "-D spark.ui.enabled=true, and says so in its next status report")
        return found.rstrip("/")

    def _remember_token(self) -> None:
        """A browser that opened the UI with ``?token=`` keeps it as the dashboard's cookie for the UI's links."""
        token = self.get_query_argument("token", None)
        if token:
            self.set_cookie(COOKIE_NAME, token, httponly=True, samesite="Strict", path="/",
                            secure=self.request.protocol == "https")
