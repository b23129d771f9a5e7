"""The history server (Flink's HistoryServer): ``flinkbench historyserver`` serves the jobs archived under
``historyserver.archive.fs.dir`` (default: ``jobmanager.archive.fs.dir``; comma-separated, local or any
fsspec URL) with the JobManager's REST routes and shapes and its dashboard, with no cluster running.

It reads new archives every ``historyserver.archive.fs.refresh-interval`` and shows at most
``historyserver.archive.retained-jobs`` (the newest), on ``historyserver.web.address`` and
``historyserver.web.port``. It answers through an ArchivedJobs gateway (runtime.jobmanager.archived_jobs):
reads as a JobManager answers them, anything that would change a job refused (409). Like every port of a
cluster it wants the cluster token (``security.token-file``), and binding beyond loopback without one is
refused; ``security.ssl.rest.*`` gives it TLS. Everything runs on one asyncio loop, storage reads in a
thread.
"""
from __future__ import annotations

import asyncio
import logging

import tornado.netutil
import tornado.web

from runtime import tls
from runtime.config import ConfigError, Configuration
from runtime.jobmanager import rest
from runtime.jobmanager.archive import ArchivedJob, read_archives
from runtime.jobmanager.archived_jobs import ArchivedJobs
from runtime.jobmanager.dashboard import Dashboard
from runtime.jobmanager.event_bus import EventBus
from runtime.jobmanager.jobmanager import UNLIMITED_BODY, resolve_token
from runtime.jobmanager.logins import LoginCodes
from runtime.stop_signal import until_stop_signal
from runtime.security import check_bind
from runtime.users import ClusterTokenOnly

log = logging.getLogger(__name__)


def archive_directories(conf: Configuration) -> list[str]:
    raw = conf.get("historyserver.archive.fs.dir") or conf.get("jobmanager.archive.fs.dir")
    found = [d.strip() for d in raw.split(",") if d.strip()]
    if not found:
        raise ConfigError("historyserver.archive.fs.dir: the history server needs the directories (or URLs) the "
                          "JobManagers archive jobs to (jobmanager.archive.fs.dir); none is set")
    return found


def newest(found: dict[str, ArchivedJob], retained: int) -> dict[str, ArchivedJob]:
    """The ``retained`` archives of the jobs that ended last (all of them for -1)."""
    if retained < 0 or len(found) <= retained:
        return found
    order = sorted(found.values(), key=lambda a: a.job.summary.end_time or a.archived_at, reverse=True)
    return {a.job_id: a for a in order[:retained]}


class HistoryServer:
    """Serves archived jobs; also what the dashboard needs of the process it runs in (its LeaderRetriever)."""

    is_leader = True  # nothing to lead: every read is answered here

    def __init__(self, conf: Configuration):
        self.directories = archive_directories(conf)
        self.refresh_s = conf.get("historyserver.archive.fs.refresh-interval")
        self.retained = conf.get("historyserver.archive.retained-jobs")
        self.address = conf.get("historyserver.web.address")
        self.conf = conf.with_overrides({"rest.address": self.address})  # what the dashboard advertises
        self.ssl_context = tls.server_context(conf)
        self.token, self.token_file = resolve_token(conf)
        self.users = ClusterTokenOnly(self.token)  # who a token names: only the cluster token is known here
        self.archives = ArchivedJobs()
        self.bus = EventBus()  # archived jobs do not change: nothing is ever published
        self.port: int | None = None
        self._server: tls.HttpServer | None = None
        self._refresher: asyncio.Task | None = None
        self.dashboard: Dashboard | None = None
        self.logins = LoginCodes()  # the dashboard's one-time login codes, as a JobManager's
        self.cli_commands: tuple[str, ...] = ()  # archived jobs take no actions: no flinkbench lines to show

    @property
    def url(self) -> str:
        return f"{tls.scheme(self.conf)}://{self.address}:{self.port}"

    async def start(self) -> None:
        check_bind(self.address, self.token)
        tls.warn_if_plain(self.conf, self.address, "the history server's port")
        await self.refresh()
        sockets = tornado.netutil.bind_sockets(self.conf.get("historyserver.web.port"), self.address)
        self.port = sockets[0].getsockname()[1]
        self.dashboard = Dashboard(self, self.port, rest.NotFoundHandler, self.logins)
        limit = self.conf.get("rest.server.max-content-length")
        app = tornado.web.Application(rest.rules(rest.RestContext(self.archives, self, self.conf, logins=self.logins)) + [
            (r"/$", tornado.web.RedirectHandler, {"url": "/dashboard"})])
        self._server = tls.HttpServer(rest.gate(app, self.users, limit, pages=self.dashboard),
                                      max_body_size=UNLIMITED_BODY, ssl_options=self.ssl_context)
        self._server.add_sockets(sockets)
        self._refresher = asyncio.get_running_loop().create_task(self._refresh_forever())
        log.info("history server at %s serving %d archived jobs from %s", self.url, len(self.archives.jobs),
                 ", ".join(self.directories))

    async def refresh(self) -> None:
        """Read archives not read before (storage I/O in a thread); an unreachable store keeps what was read."""
        try:
            found = await asyncio.get_running_loop().run_in_executor(
                None, read_archives, self.directories, self.archives.jobs)
        except OSError as err:
            log.warning("cannot read the job archives: %s", err)
            return
        self.archives.jobs = newest(found, self.retained)

    async def _refresh_forever(self) -> None:
        while True:
            await asyncio.sleep(self.refresh_s)
            await self.refresh()

    async def stop(self) -> None:
        if self._refresher is not None:
            self._refresher.cancel()
        if self._server is not None:
            self._server.stop()
        if self.dashboard is not None:
            self.dashboard.stop()
        self.bus.close()

    # -- what the REST layer and the dashboard ask of the process ------------------------------
    def leader_address(self) -> str | None:
        return self.url

    def not_leader_message(self) -> str:
        return "the history server leads nothing"

    def leadership_view(self) -> dict:
        return {"leader": None, "jobmanagers": [], "role": "historyserver"}

    def snapshot(self) -> dict:
        """The dashboard's starting picture: the archived jobs as the event stream's first message shows a cluster."""
        return {**rest.cluster_snapshot(self.archives, self, 0), "resource-provider": {}}


async def serve(conf: Configuration) -> None:
    server = HistoryServer(conf)
    await server.start()
    print(f"history server at {server.url} (token file {server.token_file})", flush=True)
    await until_stop_signal()
    await server.stop()
