"""The JobManager process: Dispatcher, ResourceManager and JobMasters behind one tornado server.

``flinkbench jobmanager`` runs :func:`main`. The server binds ``rest.address:rest.port`` and serves
the REST API, the event stream (``/events``), the TaskManagers' control channel (``/control``) and
the dashboard. Everything runs on one asyncio loop.

With ``high-availability.type`` other than ``none`` several JobManager processes run at once: each
serves REST and contends for leadership through runtime.ha; the one holding the lease leads (takes
TaskManager registrations and jobs, and resumes the jobs in the HA store when it takes over), the
others are standbys that answer ``/overview`` and ``/jobmanagers`` and refuse the rest, naming the
leader. A leader that finds its lease taken exits at once (code 3) rather than act on stale state.
"""
from __future__ import annotations

import asyncio
import logging
import math
import os
import secrets
import signal
import tempfile
import time

import tornado.httpserver
import tornado.netutil
import tornado.web

from runtime import events
from runtime.config import Configuration
from runtime.ha.services import ha_services
from runtime.ids import LeaderSessionId
from runtime.jobmanager.dashboard import Dashboard
from runtime.jobmanager.dispatcher import Dispatcher
from runtime.jobmanager.event_bus import EventBus
from runtime.jobmanager.resource_manager import ResourceManager
from runtime.jobmanager.rest import routes
from runtime.security import check_bind, new_token, read_token_file, write_token_file

log = logging.getLogger(__name__)

EXIT_LEADERSHIP_LOST = 3


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
        self.ha = ha_services(conf, working_dir(conf))
        self.dispatcher = Dispatcher(conf, self.rm, self.bus, working_dir(conf), self.ha)
        self.contender_id = f"jm-{secrets.token_hex(4)}"
        self.leader_session_id: LeaderSessionId | None = None
        self._lease_until = 0.0  # monotonic; this process acts as leader only before it
        self._contending: asyncio.Task | None = None
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
        if self.ha.lease_duration is None:
            self._grant(self.ha.try_lead(self.contender_id, self.url), math.inf)
        else:
            self._contending = asyncio.get_running_loop().create_task(self._contend())

    async def stop(self) -> None:
        if self._contending is not None:
            self._contending.cancel()
            if self.is_leader:  # jobs stay in the HA store: a standby resumes them without waiting
                self.ha.resign(self.leader_session_id)
        else:
            await self.dispatcher.shutdown()
        self.ha.close()
        self.rm.stop()
        self.bus.close()
        if self.server:
            self.server.stop()
        if self.dashboard:
            self.dashboard.stop()

    # -- leadership ---------------------------------------------------------------------------
    @property
    def is_leader(self) -> bool:
        """True while this process holds a lease it renewed recently enough to still be valid."""
        return self.leader_session_id is not None and time.monotonic() < self._lease_until

    async def _contend(self) -> None:
        """Take or renew the lease every third of its duration; exit if it was lost while leading."""
        loop = asyncio.get_running_loop()
        while True:
            asked_at = time.monotonic()
            try:
                session = await loop.run_in_executor(None, self.ha.try_lead, self.contender_id, self.url)
                await loop.run_in_executor(None, self.ha.announce, self.contender_id, self.url, os.getpid())
            except OSError as err:  # the store is unreachable: a leader's lease simply lapses
                log.warning("cannot reach the HA store: %s", err)
                await asyncio.sleep(self.ha.lease_duration / 3)
                continue
            if self.leader_session_id is not None and session != self.leader_session_id:
                self._leadership_lost(session)
            if session is not None:
                self._grant(session, asked_at + self.ha.lease_duration)
            await asyncio.sleep(self.ha.lease_duration / 3)

    def _grant(self, session: LeaderSessionId, lease_until: float) -> None:
        self._lease_until = lease_until
        if session == self.leader_session_id:
            return
        self.leader_session_id = self.dispatcher.leader_session_id = session
        if self.ha.lease_duration is None:
            return  # the only JobManager: nothing changed hands, nothing to resume
        log.info("JobManager %s at %s is now the leader (session %s)", self.contender_id, self.url, session)
        self.bus.publish(events.LeaderChanged(self.url, session, self.jobmanagers()))
        self.dispatcher.recover_jobs()

    def _leadership_lost(self, session: LeaderSessionId | None) -> None:
        """Another JobManager leads now (this one was paused or cut off): stop before acting on stale state."""
        holder = self.ha.leader()
        log.error("JobManager %s lost its leadership (now %s); exiting", self.contender_id,
                  holder.address if holder else "nobody")
        logging.shutdown()
        os._exit(EXIT_LEADERSHIP_LOST)

    def jobmanagers(self) -> list[dict]:
        """Every live JobManager with its role, for ``GET /jobmanagers`` and the event stream."""
        leader = self.ha.leader()
        return [{"id": m["id"], "address": m["address"], "url": m["address"], "pid": m["pid"],
                 "role": "leader" if leader and m["id"] == leader.contender_id else "standby"}
                for m in self.ha.members()]

    def leadership_view(self) -> dict:
        leader = self.ha.leader()
        return {"leader": {"url": leader.address, "session-id": leader.session_id} if leader else None,
                "jobmanagers": self.jobmanagers()}

    def not_leader_message(self) -> str:
        leader = self.ha.leader()
        where = f"the leader is at {leader.address}" if leader else "no leader is elected yet; retry shortly"
        return f"this JobManager ({self.url}) is a standby: {where}"

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
