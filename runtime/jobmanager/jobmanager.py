"""The JobManager process: Dispatcher, ResourceManager and JobMasters behind one tornado server.

``flinkbench jobmanager`` runs :func:`main`. The server listens on ``rest.port`` and serves
the REST API, the event stream (``/events``), the TaskManagers' control channel (``/control``) and
the dashboard. It binds ``rest.bind-address`` (default: ``rest.address``) and advertises
``http://<rest.address>:<port>`` (``rest.address`` defaults to ``jobmanager.rpc.address``) to clients,
TaskManagers and the HA store, so on several machines each process names the host others reach it
at. Everything runs on one asyncio loop.

With ``high-availability.type`` other than ``none`` several JobManager processes run at once: each
serves REST and contends for leadership through runtime.ha; the one holding the lease leads (takes
TaskManager registrations and jobs, and resumes the jobs in the HA store when it takes over), the
others are standbys that answer ``/overview`` and ``/jobmanagers`` and refuse the rest, naming the
leader. A leader whose store connection is suspended stops serving until it confirms its lease; one that
lost it (a lost session, a lease taken while it was paused) suspends its JobMasters and becomes a standby.
"""
from __future__ import annotations

import asyncio
import logging
import os
import secrets
import time
from collections.abc import Collection

import tornado.httpserver
import tornado.netutil
import tornado.web

from runtime import events, tls
from runtime.config import ConfigError, Configuration
from runtime.fileio import working_dir, write_json_atomically
from runtime.ha.drivers import ha_services
from runtime.ha.services import LeaderInfo
from runtime.ids import LeaderSessionId
from runtime.jobmanager import rest
from runtime.jobmanager.control import ControlGateways, ControlSocket
from runtime.jobmanager.dashboard import PATH as DASHBOARD_PATH
from runtime.jobmanager.dashboard import Dashboard
from runtime.jobmanager.dispatcher import Dispatcher
from runtime.jobmanager.event_bus import EventBus
from runtime.jobmanager.gateways import RestfulGateway, UnknownJob
from runtime.jobmanager.leader_election import LeaderElection
from runtime.jobmanager.logins import LoginCodes
from runtime.jobmanager.resource_manager import ResourceManager
from runtime.jobmanager.resource_provider import resource_provider
from runtime.jobmanager.savepoint_browser import SavepointBrowser
from runtime.jobmanager.rest.scope import ScopedGateway
from runtime.jobmanager.user_registry import UserRegistry
from runtime.users import UserTable
from runtime.metrics.endpoint import PrometheusEndpoint, start_endpoint
from runtime.metrics.catalog import JobView
from runtime.metrics.families import cluster_families
from runtime.stop_signal import until_stop_signal
from runtime.security import check_bind, ensure_token_file

log = logging.getLogger(__name__)

EXIT_LEADERSHIP_LOST = 3
UNLIMITED_BODY = 1 << 62


def resolve_token(conf: Configuration) -> tuple[str, str]:
    """The cluster token and its file: read it when the file exists, else make one and write it."""
    path = conf.get("security.token-file") or os.path.join(working_dir(conf), "token")
    return ensure_token_file(path), path


class JobManager:
    """The JobManager process: REST, event stream and control channel in front of the Dispatcher and ResourceManager."""
    def __init__(self, conf: Configuration, cli_commands: Collection[str] = ()):
        """``cli_commands``: the ``flinkbench`` subcommands the dashboard's hints may name (runtime.cli.commands.COMMANDS)."""
        self.conf = conf
        self.cli_commands = cli_commands
        self.ssl_context = tls.server_context(conf)  # None without TLS; a bad TLS key stops the start here
        self.token, self.token_file = resolve_token(conf)
        self.bus = EventBus()
        self.rm = ResourceManager(self.bus, conf.get("heartbeat.interval"), conf.get("heartbeat.timeout"),
                                  conf.get("heartbeat.rpc-failure-threshold"))
        self.ha = ha_services(conf, working_dir(conf))
        if self.ha.lease_duration is not None and self.ha.storage_url is None:
            self.ha.close()
            raise ConfigError("high-availability.storageDir: with several JobManagers the leader keeps job data "
                              "(push logs, collected rows) there for its successor, as Flink requires; set a "
                              "directory or fsspec URL (file://, s3://) that every JobManager reaches")
        self.contender_id = f"jm-{secrets.token_hex(4)}"
        self.election = LeaderElection(self.ha, self.contender_id, self)
        self.rm.leading = lambda: self.is_leader  # a JobManager that does not serve declares no TaskManager lost
        self.dispatcher = Dispatcher(conf, self.rm, self.bus, working_dir(conf), self.ha, self.election)
        self.users = UserRegistry(self.ha, self.token, lambda: self.dispatcher.leader_session_id)
        self.users.on_change(self._quotas_changed)
        self._users_refresh: asyncio.Task | None = None
        self.provider = resource_provider(conf, self.rm, self.bus, working_dir(conf), lambda: self.is_leader)
        self.started_at = time.time()
        self.server: tornado.httpserver.HTTPServer | None = None
        self.port: int | None = None
        self.dashboard: Dashboard | None = None
        self.metrics: PrometheusEndpoint | None = None  # metrics.reporter.prom.port

    @property
    def url(self) -> str:
        return f"{tls.scheme(self.conf)}://{self.conf.rest_address()}:{self.port}"

    async def start(self) -> None:
        address = self.conf.rest_bind_address()
        check_bind(address, self.token)
        tls.warn_if_plain(self.conf, address, "the JobManager's REST port")
        sockets = tornado.netutil.bind_sockets(self.conf.get("rest.port"), address)
        self.port = sockets[0].getsockname()[1]
        logins = LoginCodes()  # issued by the REST API, redeemed by the dashboard's login page
        self.dashboard = Dashboard(self, self.port, rest.NotFoundHandler, logins)
        limit = self.conf.get("rest.server.max-content-length")
        context = rest.RestContext(self.dispatcher, self, self.conf, self.provider.describe, logins,
                                   savepoints=SavepointBrowser(self.conf, working_dir(self.conf), self.dispatcher),
                                   users=self.users)
        app = tornado.web.Application(rest.rules(context) + [
            (r"/control$", ControlSocket, {"gateways": self._control_gateways()}),
            (r"/$", tornado.web.RedirectHandler, {"url": DASHBOARD_PATH})],
            websocket_max_message_size=limit)
        front = rest.gate(app, self.users, limit, ("/control",), pages=self.dashboard)
        self.server = tls.HttpServer(front, max_body_size=UNLIMITED_BODY,  # the gate limits bodies
                                                    ssl_options=self.ssl_context)
        self.server.add_sockets(sockets)
        self.rm.start()
        self._users_refresh = asyncio.get_running_loop().create_task(self.users.keep_fresh())
        self.provider.start(self.url, self.token_file)
        log.info("JobManager listening at %s", self.url)
        self.metrics = start_endpoint(self.conf, lambda caller: jobmanager_families(
            address, ScopedGateway(self.dispatcher, caller), time.time()), self.users.identify, address)
        self.election.start(self.url)

    def _control_gateways(self) -> ControlGateways:
        return ControlGateways(self.rm, self.dispatcher.job_master, self.bus.publish, self, self.token,
                               tls.enabled(self.conf, tls.INTERNAL))

    async def stop(self) -> None:
        self.provider.stop_provisioning()  # TaskManagers leaving now, and jobs they leave, start none
        if self._users_refresh:
            self._users_refresh.cancel()
        if self.ha.lease_duration is not None:
            self.election.stop()  # jobs stay in the HA store: a standby resumes them without waiting
        else:
            await self.dispatcher.shutdown()
        self.ha.close()
        await self.provider.stop()
        self.rm.stop()
        self.bus.close()
        if self.server:
            self.server.stop()
        if self.dashboard:
            self.dashboard.stop()
        if self.metrics:
            self.metrics.stop()

    def _quotas_changed(self, table: UserTable) -> None:
        """Users came, went or were given other quotas: the ResourceManager counts slots against the new ones."""
        self.rm.quotas.quotas = table.quotas()

    # -- leadership (runtime.jobmanager.leader_election drives it) ----------------------------
    @property
    def is_leader(self) -> bool:
        """True while this process holds a lease it confirmed recently enough to still be valid."""
        return self.election.serving

    @property
    def leader_session_id(self) -> LeaderSessionId | None:
        return self.election.session

    def known_leader(self) -> LeaderInfo | None:
        """The leader as last read from the HA store (this process while it leads)."""
        return self.election.known_leader

    def leadership_granted(self, session: LeaderSessionId, new: bool) -> None:
        self.dispatcher.leader_session_id = session
        if not new or self.ha.lease_duration is None:
            return  # leadership confirmed again, or the only JobManager: nothing changed hands
        log.info("JobManager %s at %s is now the leader (session %s)", self.contender_id, self.url, session)
        self.bus.publish(events.LeaderChanged(self.url, session, self.jobmanagers()))

    def revoke_jobs(self, session: LeaderSessionId) -> None:
        """This JobManager no longer leads under ``session``: its JobMasters stop acting and the
        TaskManagers are let go (they cancel their tasks and follow the leader)."""
        log.warning("JobManager %s lost the leadership of session %s; its jobs stay in the HA store",
                    self.contender_id, session)
        self.dispatcher.leader_session_id = None
        self.dispatcher.suspend_jobs("this JobManager lost the leadership")
        self.rm.disconnect_all("this JobManager no longer leads")

    def recover_jobs(self, session: LeaderSessionId) -> None:
        asyncio.get_running_loop().create_task(self.dispatcher.load_archives())  # what ended under earlier leaders
        try:
            self.dispatcher.recover_jobs()
        except OSError as err:  # the store went away again: the next confirmed lease recovers them
            log.error("cannot read the jobs to recover from the HA store: %s", err)

    def jobmanagers(self) -> list[dict]:
        """Every live JobManager with its role, for ``GET /jobmanagers`` and the event stream."""
        leader = self.known_leader()
        return [{"id": m["id"], "address": m["address"], "url": m["address"], "pid": m["pid"],
                 "role": "leader" if leader and m["id"] == leader.contender_id else "standby"}
                for m in self.election.members]

    def leadership_view(self) -> dict:
        leader = self.known_leader()
        return {"leader": {"url": leader.address, "session-id": leader.session_id} if leader else None,
                "jobmanagers": self.jobmanagers(), "role": self.role}

    @property
    def role(self) -> str:
        """This JobManager's own role: leader (serving), suspended (led, store unreachable) or standby."""
        if self.is_leader:
            return "leader"
        return "suspended" if self.election.state.session is not None else "standby"

    def hold_election(self, seconds: float) -> None:
        self.election.hold(seconds)

    def leader_address(self) -> str | None:
        leader = self.known_leader()
        return leader.address if leader else None

    def not_leader_message(self) -> str:
        leader = self.known_leader()
        where = f"the leader is at {leader.address}" if leader else "no leader is elected yet; retry shortly"
        if self.role == "suspended":
            where += " (it led until its connection to the HA store was suspended and serves again once it confirms the lease)"
        return f"this JobManager ({self.url}) is a standby: {where}"

    def snapshot(self) -> dict:
        """First message on the event stream: the whole cluster as REST would show it now."""
        return {**rest.cluster_snapshot(self.dispatcher, self, self.bus.seq),
                "resource-provider": self.provider.describe()}


def jobmanager_families(host: str, gateway: RestfulGateway, now: float):
    """The JobManager's Prometheus families (runtime.metrics), read through the Dispatcher's gateway at ``now``."""
    views = []
    for summary in gateway.list_jobs():
        try:
            stats = gateway.checkpoint_stats(summary.job_id)
        except UnknownJob:
            stats = None
        views.append(JobView(summary, stats, now))
    return cluster_families(host, gateway.cluster_overview(), views)


def write_ready_file(path: str, jm: JobManager) -> None:
    """Tell a parent process where we listen (written atomically: it appears complete or not at all)."""
    write_json_atomically(path, {"url": jm.url, "port": jm.port, "token_file": jm.token_file, "pid": os.getpid()})


async def serve(conf: Configuration, ready_file: str | None = None, cli_commands: Collection[str] = ()) -> None:
    jm = JobManager(conf, cli_commands)
    await jm.start()
    if ready_file:
        write_ready_file(ready_file, jm)
    print(f"JobManager at {jm.url} (token file {jm.token_file})", flush=True)
    await until_stop_signal()
    await jm.stop()
