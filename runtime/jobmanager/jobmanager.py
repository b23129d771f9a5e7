"""The JobManager process: Dispatcher, ResourceManager and JobMasters behind one tornado server.

``flinkbench jobmanager`` runs :func:`main`. The server binds ``rest.address:rest.port`` and serves
the REST API, the event stream (``/events``), the TaskManagers' control channel (``/control``) and
the dashboard. Everything runs on one asyncio loop.
"""
from __future__ import annotations

import asyncio
import logging
import os
import signal
import tempfile
import time

import tornado.httpserver
import tornado.netutil
import tornado.web

from runtime.config import Configuration
from runtime.ids import LeaderSessionId
from runtime.jobmanager.dashboard import Dashboard
from runtime.jobmanager.dispatcher import Dispatcher
from runtime.jobmanager.event_bus import EventBus
from runtime.jobmanager.resource_manager import ResourceManager
from runtime.jobmanager.rest import routes
from runtime.security import check_bind, new_token, read_token_file, write_token_file

log = logging.getLogger(__name__)


def working_dir(conf: Configuration) -> str:
    path = conf.get("cluster.working-dir") or os.path.join(tempfile.gettempdir(), f"flinkbench-{os.getuid()}")
    os.makedirs(path, mode=0o700, exist_ok=True)
    return path


def resolve_token(conf: Configuration) -> tuple[str, str]:
    """The cluster token and its file: read it when the file exists, else make one and write it."""
    path = conf.get("security.token-file") or os.path.join(working_dir(conf), "token")
    if os.path.exists(path):
        return read_token_file(path), path
    token = new_token()
    write_token_file(path, token)
    return token, path


class JobManager:
    def __init__(self, conf: Configuration):
        self.conf = conf
        self.token, self.token_file = resolve_token(conf)
        self.bus = EventBus()
        self.rm = ResourceManager(self.bus, conf.get("heartbeat.interval"), conf.get("heartbeat.timeout"),
                                  conf.get("heartbeat.rpc-failure-threshold"))
        self.dispatcher = Dispatcher(conf, self.rm, self.bus, working_dir(conf))
        self.leader_session_id = LeaderSessionId.new()
        self.is_leader = True
        self.started_at = time.time()
        self.server: tornado.httpserver.HTTPServer | None = None
        self.port: int | None = None
        self.dashboard: Dashboard | None = None

    @property
    def url(self) -> str:
        return f"http://{self.conf.get('rest.address')}:{self.port}"

    async def start(self) -> None:
        address = self.conf.get("rest.address")
        check_bind(address, self.token)
        sockets = tornado.netutil.bind_sockets(self.conf.get("rest.port"), address)
        self.port = sockets[0].getsockname()[1]
        self.dashboard = Dashboard(self)
        app = self.dashboard.application(routes(self), self.port)
        self.server = tornado.httpserver.HTTPServer(app, max_body_size=self.conf.get("rest.server.max-content-length"))
        self.server.add_sockets(sockets)
        self.rm.start()
        log.info("JobManager listening at %s", self.url)

    async def stop(self) -> None:
        await self.dispatcher.shutdown()
        self.rm.stop()
        self.bus.close()
        if self.server:
            self.server.stop()
        if self.dashboard:
            self.dashboard.stop()

    def leadership_view(self) -> dict:
        return {"leader": {"url": self.url, "session-id": self.leader_session_id},
                "jobmanagers": [{"url": self.url, "role": "leader" if self.is_leader else "standby",
                                 "pid": os.getpid()}]}

    def snapshot(self) -> dict:
        """First message on the event stream: the whole cluster as REST would show it now."""
        return {"type": "ClusterSnapshot", "seq": self.bus.history[-1]["seq"] if self.bus.history else 0,
                "ts": time.time(), **self.dispatcher.overview(), **self.leadership_view(),
                "taskmanagers": self.dispatcher.taskmanagers(), "jobs": self.dispatcher.jobs_overview()}


def write_ready_file(path: str, jm: JobManager) -> None:
    """Tell a parent process where we listen (written atomically: it appears complete or not at all)."""
    import json

    tmp = path + ".tmp"
    with open(tmp, "w") as fh:
        json.dump({"url": jm.url, "port": jm.port, "token_file": jm.token_file, "pid": os.getpid()}, fh)
    os.replace(tmp, path)


async def serve(conf: Configuration, ready_file: str | None = None) -> None:
    jm = JobManager(conf)
    await jm.start()
    if ready_file:
        write_ready_file(ready_file, jm)
    print(f"JobManager at {jm.url} (token file {jm.token_file})", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await jm.stop()
