"""Apache Flink's own web dashboard in front of a Flinkbench JobManager, for compatibility tests.

The dashboard is the ``web/`` folder inside ``lib/flink-dist-<version>.jar`` of the apache-flink wheel
(tests.helpers.pyflink installs it); it is unpacked into a folder the test owns, never into the
repository. A small tornado server in the test process serves those static files and forwards every
other path (the REST calls the dashboard makes relative to its page) to the JobManager with the cluster
token, as a reverse proxy in front of a Flink cluster would.
"""
from __future__ import annotations

import asyncio
import threading
import zipfile
from pathlib import Path

import tornado.httpclient
import tornado.httpserver
import tornado.netutil
import tornado.web

from tests.helpers.pyflink import FLINK_VERSION, PyFlink

STATIC = r"/((?:assets/.*)|(?:[^/]+\.(?:js|css|html|ico|png|svg|txt|woff2?|ttf)))"


def unpack_web(flink: PyFlink, into: Path) -> Path:
    """The dashboard's static files, unpacked from flink-dist into ``into``; the folder holding index.html."""
    jar = flink.flink_home / "lib" / f"flink-dist-{FLINK_VERSION}.jar"
    with zipfile.ZipFile(jar) as dist:
        names = [n for n in dist.namelist() if n.startswith("web/") and not n.endswith("/")]
        if not names:
            raise RuntimeError(f"{jar} has no web/ folder: not the Flink distribution the test expects")
        dist.extractall(into, names)
    return into / "web"


class _Forward(tornado.web.RequestHandler):
    def initialize(self, jobmanager: str, token: str, calls: list) -> None:
        self.jobmanager, self.token, self.calls = jobmanager, token, calls

    async def get(self, path: str) -> None:
        uri = self.request.uri or "/"
        reply = await tornado.httpclient.AsyncHTTPClient().fetch(
            self.jobmanager + uri, headers={"Authorization": f"Bearer {self.token}"}, raise_error=False,
            request_timeout=30)
        self.calls.append((reply.code, uri))
        self.set_status(reply.code)
        self.set_header("Content-Type", reply.headers.get("Content-Type", "application/json"))
        self.finish(reply.body or b"")


class FlinkWebDashboard:
    """Serves Flink's dashboard from ``web`` on a free 127.0.0.1 port, the rest forwarded to the JobManager.
    ``calls`` lists (status, path) of every forwarded request."""

    def __init__(self, web: Path, jobmanager: str, token: str):
        self.calls: list[tuple[int, str]] = []
        self.url = ""
        self._app = tornado.web.Application([
            (r"/()", tornado.web.StaticFileHandler, {"path": str(web), "default_filename": "index.html"}),
            (STATIC, tornado.web.StaticFileHandler, {"path": str(web)}),
            (r"/(.*)", _Forward, {"jobmanager": jobmanager.rstrip("/"), "token": token, "calls": self.calls})])
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="flink-web-dashboard")

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        server = tornado.httpserver.HTTPServer(self._app)
        sockets = tornado.netutil.bind_sockets(0, "127.0.0.1")
        server.add_sockets(sockets)
        self.url = f"http://127.0.0.1:{sockets[0].getsockname()[1]}"
        self._ready.set()
        self._loop.run_forever()
        server.stop()

    def __enter__(self) -> FlinkWebDashboard:
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("the Flink dashboard's server did not start")
        return self

    def __exit__(self, *exc) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    def failed_calls(self) -> list[tuple[int, str]]:
        return [(status, path) for status, path in self.calls if status >= 400]
