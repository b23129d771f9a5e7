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

The page is behind the cluster token: ``/dashboard?token=<token>`` (which also sets the token
cookie for the page's own requests and WebSocket), the cookie, or ``Authorization: Bearer``.
Anything else is answered 401 with a line saying how to get in.
"""
from __future__ import annotations

import logging
import time

from runtime.process_info import LogTail
from runtime.views.model import ClusterModel

log = logging.getLogger(__name__)

PATH = "/dashboard"
#: what the Bokeh app serves besides its pages: its scripts and styles, and the browser's icon request
OWN_PREFIXES = (PATH, "/static/", "/favicon.ico")


class Dashboard:
    """The dashboard's model (fed from the event bus from the start) and, once asked for, its web app."""

    def __init__(self, jm, port: int, not_found: type):
        """``not_found`` answers a dashboard path that names no page (the REST API's JSON 404)."""
        self.jm, self.port, self.not_found = jm, port, not_found
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

    def find_handler(self, request):
        """Tornado's routing hook: the Bokeh app's handler for ``request``, the app built at the first call."""
        if self._server is None:
            started = time.monotonic()
            from runtime.jobmanager.dashboard.server import DashboardServer

            self._server = DashboardServer(self.jm, self.model, self.logs, self.port, self.not_found)
            log.info("dashboard started in %.1f s", time.monotonic() - started)
        return self._server.app.find_handler(request)

    def stop(self) -> None:
        logging.getLogger().removeHandler(self.logs)
        if self._server is not None:
            self._server.stop()
