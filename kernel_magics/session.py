"""FlinkSession: what one kernel knows about its cluster: the REST client, the one event-stream
connection and the model it feeds, the live views, the jobs shown and recorded, the replays, and a
local cluster if the kernel started one (stopped when the kernel exits). Which cluster that is, and when
it stops, is told to the Jupyter server too (kernel_magics.kernel_registration), so the side panel
follows it.

Each job view leaves a static copy of itself in the notebook when its job ends, and when the session
stops following the cluster or the kernel stops (kernel_magics.widgets.static_output): the session sees
to the last two and, at the start of every cell, sends again the copies that threads made.
"""
from __future__ import annotations

import atexit
import logging
import os

from runtime import tls
from runtime.client import TERMINAL_STATES, ClusterError, RestClient
from runtime.config import ConfigError
from runtime.ha.retrieval import ha_settings
from runtime.security import SecurityError
from runtime.views.model import ClusterModel
from runtime.views.stream import EventStream

from kernel_magics.errors import FlinkError, cluster_error
from kernel_magics.kernel_registration import KernelRecord, server_dashboard_link
from kernel_magics.widgets.updater import ViewUpdater

log = logging.getLogger(__name__)

STREAM_CONNECT_WAIT_S = 15.0
SETTLE_S = 10.0  # how long a view or recording of a job that ended may take to read its last rows
MAX_LIVE_DASHBOARDS = 4


class FlinkSession:
    """The notebook's connection to a cluster: its REST client, its event stream and the local cluster it started."""
    def __init__(self, shell):
        self.shell = shell
        self.cluster = None  # runtime.cluster.LocalCluster started by %flink local
        self.client: RestClient | None = None
        self.token_file: str | None = None
        self.model = ClusterModel()
        self.stream: EventStream | None = None
        self.updater = ViewUpdater()
        self.model.add_listener(self.updater.poke)
        self.jobs: dict[str, object] = {}  # job id -> JobView, in the order shown
        self.replays: list = []  # the views of %flink replay
        self.recorders: dict[str, object] = {}  # job id -> runtime.views.recording.Recorder
        self.dashboards: list = []
        self.record = KernelRecord.for_this_kernel()
        atexit.register(self.shutdown)

    def resend_copies(self, *_info) -> None:
        for view in self.views():
            try:
                view.copy.resend()
            except Exception:  # a copy that cannot be sent must not stop the user's cell
                log.exception("could not send a view's static copy again")

    def views(self) -> list:
        return list(self.jobs.values()) + list(self.replays)

    def _ended(self, job_id: str) -> bool:
        with self.model.lock:
            job = self.model.jobs.get(job_id)
            return job is not None and job.terminal

    def settle_view(self, job_id: str, timeout: float = SETTLE_S) -> None:
        """After the notebook ended a job: its view reads the last rows and leaves its copy in this cell."""
        view = self.jobs.get(job_id)
        if view is not None and view.finished.wait(timeout):
            self.updater.flush()
            view.leave_copy(view.ended_reason)

    def leave_copies(self, reason: str) -> None:
        """Every view that has not left its static copy leaves it now (the job may run on)."""
        for view in self.views():
            try:
                view.leave_copy(reason)
            except Exception:
                log.exception("a view could not leave its static copy")

    # -- state --------------------------------------------------------------------------------
    @property
    def connected(self) -> bool:
        return self.client is not None

    @property
    def url(self) -> str | None:
        return self.client.url if self.client else None

    def require_client(self) -> RestClient:
        """The connected client; connects first to the cluster the environment names, as the CLI does
        (FLINKBENCH_JOBMANAGER_URL with FLINKBENCH_TOKEN_FILE or FLINKBENCH_TOKEN, e.g. set by JupyterLab)."""
        if self.client is None:
            url = os.environ.get("FLINKBENCH_JOBMANAGER_URL")
            if not url:
                raise FlinkError("not connected to a cluster: run '%flink local' to start one in this kernel, "
                                 "or '%flink connect URL --token-file FILE' to use a running one")
            self.connect(url, os.environ.get("FLINKBENCH_TOKEN"), os.environ.get("FLINKBENCH_TOKEN_FILE"))
            print(f"connected to {self.url} (named by FLINKBENCH_JOBMANAGER_URL)")
        return self.client

    def views_of(self, job_id: str):
        return self.jobs.get(job_id)

    # -- connecting ---------------------------------------------------------------------------
    def connect(self, url: str | None, token: str | None = None, token_file: str | None = None,
                ha: dict[str, str] | None = None, trust_cert: str | None = None) -> dict:
        """Check the JobManager answers and accepts the token, then follow it (and its leader). With
        ``ha`` (the cluster's ``high-availability.*`` keys, e.g. a ZooKeeper quorum) the leader is found
        through the HA services, also when ``url`` is left out or dies later; without, the client learns
        the cluster's other JobManagers and its HA settings from the JobManager it reached. An https
        JobManager is verified against ``trust_cert`` (else $FLINKBENCH_SECURITY_SSL_REST_TRUST_CERT, else the
        system's CAs)."""
        if url is not None and not url.startswith(("http://", "https://")):
            raise FlinkError(f"JobManager URL must start with http:// or https://, got {url!r}")
        try:
            client = RestClient(url, token=token, token_file=token_file, ha=ha,
                                trust_cert=trust_cert or tls.trust_from_environment())
        except (SecurityError, ConfigError, ClusterError) as err:
            raise FlinkError(f"cannot connect to {url or 'the leader the HA services name'}: {err}") from None
        try:
            overview = client.overview()
        except ClusterError as err:
            client.close()
            if err.status == 401:
                raise FlinkError(f"the JobManager at {client.url} refused the token: {err}") from None
            raise cluster_error(err, f"cannot connect to {client.url}") from None
        self._learn_cluster(client, overview, follow_ha=ha is None)
        self._attach(client, token_file)
        return overview

    @staticmethod
    def _learn_cluster(client: RestClient, overview: dict, follow_ha: bool) -> None:
        """Remember every JobManager the cluster lists and, unless given, its HA settings, so that the
        client finds the leader when the address it was given dies."""
        client.add_jobmanagers([jm.get("address", "") for jm in overview.get("jobmanagers", [])])
        leader = ((overview.get("leader") or {}).get("url") or "").rstrip("/")
        if leader and leader != client.url:
            client.add_jobmanagers([leader])
            client.url = leader
        if not follow_ha:
            return
        try:
            settings = ha_settings({e["key"]: e["value"] for e in client.get("/jobmanager/config")})
        except (ClusterError, KeyError, TypeError):
            return  # an older JobManager: the addresses it listed are what we have
        if settings:
            client.follow_ha(settings)

    def start_local(self, taskmanagers: int, slots: int, config: dict, **options):
        """Start a LocalCluster (``options`` go to it as they are) and connect to it."""
        from runtime.cluster import LocalCluster

        if self.cluster is not None:
            raise FlinkError(f"a local cluster is already running at {self.cluster.url}; '%flink stop' ends it")
        cluster = LocalCluster(taskmanagers, slots, config, **options)
        try:
            cluster.start()
        except BaseException:
            cluster.stop()
            raise
        self._detach()
        self.cluster = cluster
        self._attach(cluster.client, cluster.token_file)
        return cluster

    def _attach(self, client: RestClient, token_file: str | None) -> None:
        self._detach()
        self.client, self.token_file = client, token_file
        os.environ["FLINKBENCH_JOBMANAGER_URL"] = client.url
        if token_file:
            os.environ["FLINKBENCH_TOKEN_FILE"] = token_file
            os.environ.pop("FLINKBENCH_TOKEN", None)
        elif client.token:
            os.environ["FLINKBENCH_TOKEN"] = client.token
            os.environ.pop("FLINKBENCH_TOKEN_FILE", None)
        if client.trust_cert:  # jobs the kernel submits, and their result readers, verify the same way
            os.environ[tls.TRUST_CERT_ENV] = client.trust_cert
        self.stream = EventStream(self.model, client.url, client.token, on_leader_change=self._leader_moved,
                                  addresses=client.urls, ssl_context=client.ssl_context).start()
        self._register()
        if not self.stream.wait_connected(STREAM_CONNECT_WAIT_S):
            log.warning("event stream not connected yet: %s", self.model.connection["message"])

    def _register(self) -> None:
        """Tell the Jupyter server which cluster this kernel follows (the panel shows it for this notebook)."""
        if self.client is not None:
            self.record.connected(self.client.url, self.token_file, self.client.trust_cert, self.cluster is not None)

    def _leader_moved(self, url: str) -> None:
        """The event stream found a new leader: REST calls go there too (the client object is shared)."""
        if self.client is not None:
            self.client.url = url
            os.environ["FLINKBENCH_JOBMANAGER_URL"] = url
            self._register()

    def dashboard_link(self) -> str:
        """A link that opens the cluster's web dashboard logged in, with no token in it: through the Jupyter
        server when one started this kernel (good for as long as the cluster runs), else a one-time link."""
        client = self.require_client()
        through_jupyter = server_dashboard_link()
        if through_jupyter:
            return through_jupyter
        link = client.post("/login-links", {})
        return f"{link['url']}  (opens once, within {link['expires-in-s'] / 60:g} minutes)"

    def disconnect(self, reason: str = "the notebook disconnected from the cluster") -> None:
        """Stop following the cluster; views stop updating and leave their static copies, recordings end,
        jobs and a local cluster keep running."""
        self._detach(reason)
        self.record.clear()

    def _detach(self, reason: str = "the notebook followed another cluster") -> None:
        for view in list(self.jobs.values()):  # a job that has ended: its last rows, then the copy
            if view.current_state() in TERMINAL_STATES:
                view.finished.wait(SETTLE_S)
        for job_id, recorder in list(self.recorders.items()):
            recorder.stop(wait_for_end=SETTLE_S if self._ended(job_id) else 0.0)
        self.recorders.clear()
        for view in list(self.jobs.values()):
            view.stop()
            view.leave_copy(reason)
        if self.stream is not None:
            self.stream.close()
            self.stream = None
        if self.client is not None:
            self.client.close()
        self.client = None
        for name in ("FLINKBENCH_JOBMANAGER_URL", "FLINKBENCH_TOKEN_FILE", "FLINKBENCH_TOKEN", tls.TRUST_CERT_ENV):
            os.environ.pop(name, None)

    def stop_local(self) -> str:
        if self.cluster is None:
            raise FlinkError("this kernel started no local cluster" +
                             (f" (it is connected to {self.url}; '%flink disconnect' leaves it)" if self.connected else ""))
        url = self.cluster.url
        self._detach("the local cluster was stopped")
        self.record.stopped(url, "'%flink stop' stopped it")  # before it goes, so the panel never sees it dead
        self.cluster.stop()
        self.cluster = None
        return url

    def shutdown(self) -> None:
        """At kernel exit: stop every thread and the local cluster's processes."""
        try:
            was_connected = self.client is not None
            self.leave_copies("the kernel stopped")
            self._detach("the kernel stopped")
            if self.cluster is not None:
                self.record.stopped(self.cluster.url, "it stopped with the kernel that started it")
                self.cluster.stop()
                self.cluster = None
            elif was_connected:  # a second call (unload, then exit) keeps what the first one said
                self.record.clear()
        finally:
            self.updater.close()

    # -- views --------------------------------------------------------------------------------
    def finish_recording(self, job_id: str) -> None:
        """A waiting cell returns once the recording of its job is complete too, so that the next cell can replay
        it: a recording goes on for its job's last events a moment after the job ended."""
        recorder = self.recorders.get(job_id)
        if recorder is not None and recorder.finished.wait(SETTLE_S):
            self.recorders.pop(job_id, None)

    def show_job(self, view) -> None:
        self.jobs[view.job_id] = view
        view.start()

    def add_dashboard(self, dashboard) -> None:
        """Keep the newest few dashboards live; older ones stop updating (each costs a redraw)."""
        self.dashboards.append(dashboard)
        for old in self.dashboards[:-MAX_LIVE_DASHBOARDS]:
            old.closed = True
        self.dashboards = self.dashboards[-MAX_LIVE_DASHBOARDS:]
        self.updater.add(dashboard)

    def seed_job(self, job_id: str) -> dict:
        """Load a job that started before this kernel connected into the model (details and checkpoints)."""
        client = self.require_client()
        details = client.get(f"/jobs/{job_id}")
        self.model.seed_job(details)
        try:
            self.model.seed_checkpoints(job_id, client.get(f"/jobs/{job_id}/checkpoints"))
        except ClusterError as err:
            if err.status != 404:
                raise
        return details


_SESSIONS: dict[int, FlinkSession] = {}


def session_for(shell) -> FlinkSession:
    """The session of this shell (one per kernel), made on first use."""
    key = id(shell)
    if key not in _SESSIONS:
        _SESSIONS[key] = session = FlinkSession(shell)
        if getattr(shell, "events", None) is not None:
            shell.events.register("pre_run_cell", session.resend_copies)
        _leave_copies_at_kernel_shutdown(shell)
    return _SESSIONS[key]


def drop_session(shell) -> None:
    session = _SESSIONS.pop(id(shell), None)
    if session is not None:
        if getattr(shell, "events", None) is not None:
            shell.events.unregister("pre_run_cell", session.resend_copies)
        session.shutdown()


def _leave_copies_at_kernel_shutdown(shell) -> None:
    """ipykernel has no shutdown event; its ``do_shutdown`` runs before the reply, while the front still
    listens, so the views' static copies are left there (by whichever session the shell has then)."""
    kernel = getattr(shell, "kernel", None)
    if kernel is None or getattr(kernel.do_shutdown, "leaves_copies", False):
        return
    original = kernel.do_shutdown

    def do_shutdown(restart):
        session = _SESSIONS.get(id(shell))
        if session is not None:
            session.leave_copies("the kernel stopped")
        return original(restart)
    do_shutdown.leaves_copies = True  # type: ignore[attr-defined]
    kernel.do_shutdown = do_shutdown
