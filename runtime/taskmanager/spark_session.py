"""A TaskManager's Spark session: what it is configured with, whether it is healthy, and a fresh one when not.

The session is ``local[<slots>]`` in a JVM of the TaskManager's own, a driver of a Spark cluster
(``spark.master``: ``spark://``, ``yarn``, ``k8s://``), or a Spark Connect session (``spark.remote``,
``sc://host:port``) whose driver is the server. Every ``spark.*`` key of the configuration reaches the
session and wins over the defaults here; the driver advertises ``taskmanager.host`` and binds
``taskmanager.bind-host`` so that a cluster's executors on other machines reach it.

A JVM that exited (Spark ends a local driver on an OutOfMemoryError), whose context stopped, or that
raised ``taskmanager.spark.oom-restart-threshold`` OutOfMemoryErrors is replaced by a fresh JVM process
before the next task uses it; heap exhausted once may stay short of memory, so a new session inside the
old JVM is not enough. A Spark Connect session is replaced by a new session on the server.

Every method blocks (JVM start-up, RPCs): call from executor threads, never the TaskManager's loop.
"""
from __future__ import annotations

import contextlib
import logging
import os
import subprocess
import threading
import time

from runtime.config import Configuration
from runtime.taskmanager import class_archive
from runtime.taskmanager.spark_functions import ship_by_value

log = logging.getLogger(__name__)

OOM_MARKER = "OutOfMemoryError"
JVM_EXIT_GRACE_S = 5.0  # a driver JVM whose context stopped is given this long to exit and say why
# A session found healthy is not asked again (two round trips to its JVM) for this long, unless a failure was noted
# meanwhile: a clicks bundle asked for the session eleven times, 22 of its 111 round trips.
HEALTHY_FOR_S = 1.0


# Spark keeps the last thousand SQL executions, jobs and stages (and 100,000 tasks) in its driver's status
# store for its web UI, whether or not the UI runs. Every bundle is one of each, so with the UI off (our
# default) that was 18 MB more live heap per JVM after 2,000 bundles, history nobody sees, turning into
# tenured garbage as it ages out. Stages are kept a little longer: the TaskManager reads each subtask's from
# there about once a second for its drill-down (runtime.taskmanager.spark_work), so RETAINED_STAGES must hold a
# second's stages with room to spare.
RETAINED_STAGES = 100
UNSEEN_HISTORY = {"spark.sql.ui.retainedExecutions": "1", "spark.ui.retainedJobs": "1",
                  "spark.ui.retainedStages": str(RETAINED_STAGES), "spark.ui.retainedTasks": "10"}

# Spark's memory pages (hash aggregation, sorts) default to heap / cores / 16, 64 MB for a 2 GB driver with one
# slot: each bundle's aggregation then allocated a 64 MB array, too large for the young generation, straight
# into the old one, where it waited as garbage for a full collection and the heap grew around it. 4 MB pages are
# born and die young (two TaskManagers, the benchmark's sequence: cluster peak 1.433 -> 1.337 GiB, Spark
# heap committed 211 -> 153 MB, throughput within 6 %). A record larger than a page still gets a page its size.
PAGE_SIZE = "4m"


def session_settings(conf: Configuration, slots: int) -> dict[str, str]:
    """Everything the session is built with: the TaskManager's defaults, then each explicit ``spark.*`` key.

    A Spark Connect session takes only session-level settings (``spark.sql.*`` and the like): the
    server's own configuration decides its driver and executors, so the driver defaults are left out. A
    driver of our own keeps next to no history of its queries unless ``spark.ui.enabled`` asks for its web UI.
    """
    partitions = conf.get("spark.sql.shuffle.partitions") or slots
    settings = {"spark.sql.shuffle.partitions": str(partitions), "spark.sql.adaptive.enabled": "false",
                "spark.sql.execution.arrow.pyspark.enabled": "true", "spark.sql.session.timeZone": "UTC",
                # Flink's arithmetic is Java's: INT and BIGINT wrap around on overflow, where Spark 4's ANSI mode
                # fails the query; the SQL planner writes what differs besides (integer division, strict CASTs)
                "spark.sql.ansi.enabled": "false",
                # PySpark records the Python call site of every column function for error contexts: four
                # more round trips to the JVM per call (F.col 0.2 -> 0.9 ms), and the sites it would name
                # are lines of this runtime, not of the user's job.
                "spark.python.sql.dataFrameDebugging.enabled": "false"}
    explicit = conf.spark_settings()
    if not conf.get("spark.remote"):
        settings.update({
            "spark.master": conf.get("spark.master") or f"local[{slots}]",
            "spark.driver.memory": conf.get("spark.driver.memory"),
            "spark.driver.host": conf.get("taskmanager.host"),
            "spark.driver.bindAddress": conf.taskmanager_bind_host(),
            "spark.default.parallelism": str(slots),
            "spark.ui.enabled": "false", "spark.ui.showConsoleProgress": "false", "spark.ui.killEnabled": "false",
            "spark.python.worker.reuse": "true", "spark.buffer.pageSize": PAGE_SIZE,
            "spark.driver.extraJavaOptions": class_archive.base_java_options(conf)})
        if explicit.get("spark.ui.enabled", "false").lower() != "true":
            settings.update(UNSEEN_HISTORY)
    for key in ("spark.remote", "spark.master", "spark.sql.shuffle.partitions", "spark.driver.extraJavaOptions"):
        explicit.pop(key, None)  # already resolved above (empty or 0 mean "ours")
    if conf.get("spark.remote"):
        explicit.pop("spark.driver.memory", None)  # the server's JVM is started already
    return {**settings, **explicit}


def health_verdict(jvm_exit_code: int | None, context_stopped: bool, oom_errors: int, threshold: int) -> str | None:
    """Why the session must be replaced, or None while it is fit to run tasks."""
    if jvm_exit_code is not None:
        return f"the Spark JVM exited with code {jvm_exit_code}"
    if context_stopped:
        return "the Spark context stopped"
    if oom_errors >= threshold:
        return f"the Spark JVM raised {oom_errors} OutOfMemoryErrors (taskmanager.spark.oom-restart-threshold {threshold})"
    return None


def is_out_of_memory(err: BaseException) -> bool:
    """True for a Spark failure caused by an OutOfMemoryError (in the driver or an executor)."""
    return OOM_MARKER in str(err) or OOM_MARKER in type(err).__name__


class SparkSessionKeeper:
    """Holds one TaskManager's session and replaces it (with its JVM) once it is unhealthy."""

    def __init__(self, conf: Configuration, slots: int, app_name: str):
        self.remote = conf.get("spark.remote")
        self.settings = session_settings(conf, slots)
        self.oom_threshold = conf.get("taskmanager.spark.oom-restart-threshold")
        self.block_manager_threads = conf.get("taskmanager.spark.block-manager-threads")
        self.app_name = app_name
        self.advertised_host = conf.get("taskmanager.host")
        self.archive = class_archive.archive_path(conf)
        self._records_classes = False  # the JVM can write the class archive (it did not exist at launch)
        self.restarts = 0  # sessions replaced because they were unhealthy
        self._session = None
        self._oom_errors = 0
        self._lock = threading.Lock()
        self._stopped = False  # the TaskManager is stopping: no session is started again
        self._healthy_at = float("-inf")  # when the session was last found healthy (time.monotonic)

    @property
    def master(self) -> str:
        return self.remote or self.settings["spark.master"]

    def session(self):
        """The live session, replacing an unhealthy one first (the first call starts it). After :meth:`stop`
        it raises: a task still finishing its bundle then fails instead of launching a JVM nobody will use
        (one did, at a cluster's stop, and held its TaskManager past the stop's grace period)."""
        with self._lock:
            if self._stopped:
                raise RuntimeError("this TaskManager is stopping: its Spark session is gone")
            check = time.monotonic() - self._healthy_at >= HEALTHY_FOR_S
            if self._session is not None and check:
                reason = self._verdict()
                if reason:
                    log.error("%s; replacing it with a fresh %s", reason,
                              "session" if self.remote else "JVM process")
                    self._discard()
                    self.restarts += 1
            if self._session is None:
                self._session = self._create()
            if check:
                self._healthy_at = time.monotonic()
            return self._session

    def current(self):
        """The session if one is up, else None: never starts or replaces one (for status reports)."""
        return self._session

    def recheck(self) -> None:
        """Something failed that may have been the session: its health is checked at its next use."""
        self._healthy_at = float("-inf")

    def note_failure(self, err: BaseException) -> None:
        """A Spark action raised ``err``: the session's health is checked at its next use, and an
        OutOfMemoryError counted."""
        self.recheck()
        if is_out_of_memory(err):
            with self._lock:
                self._oom_errors += 1
            log.warning("Spark ran out of memory (%d of %d before the JVM is replaced)",
                        self._oom_errors, self.oom_threshold)

    def jvm_pid(self) -> int | None:
        """The pid of this TaskManager's own Spark JVM (None for Spark Connect or before it started)."""
        return None if self.remote or self._session is None else _classic_jvm_pid()

    def stop(self) -> None:
        with self._lock:
            self._stopped = True
            if self._session is not None:
                self._discard()

    def save_class_archive(self) -> bool:
        """Write the machine's Spark class archive from this session's JVM if it has none yet (call on
        a warmed session while no task runs: the JVM pauses for the dump)."""
        pid = self.jvm_pid()
        if not self._records_classes or pid is None or self.archive is None:
            return False
        return class_archive.write(pid, self.archive)

    def archive_in_use(self) -> bool:
        """True when this session's JVM maps the class archive."""
        pid = self.jvm_pid()
        return pid is not None and self.archive is not None and class_archive.is_mapped(pid, self.archive)

    # -- internals ----------------------------------------------------------------------------
    def _create(self):
        os.environ.setdefault("SPARK_LOCAL_IP", self.advertised_host)
        os.environ.setdefault("PYARROW_IGNORE_TIMEZONE", "1")
        ship_by_value()
        from pyspark.sql import SparkSession

        settings = dict(self.settings)
        builder = SparkSession.builder.appName(self.app_name)
        if self.remote:
            builder = builder.remote(self.remote)
        else:  # decided at each launch: a replacement JVM maps an archive written meanwhile
            settings["spark.driver.extraJavaOptions"], self._records_classes = class_archive.driver_java_options(
                settings["spark.driver.extraJavaOptions"], self.archive)
        for key, value in settings.items():
            builder = builder.config(key, value)
        # Connect: a new server-side session each time (getOrCreate would hand back the discarded one)
        session = builder.create() if self.remote else builder.getOrCreate()
        if not self.remote:
            session.sparkContext.setLogLevel("ERROR")
            pid = _classic_jvm_pid()
            if pid is not None and f"-XX:SharedArchiveFile={self.archive}" in settings["spark.driver.extraJavaOptions"]:
                class_archive.forget_unmapped(pid, self.archive)  # told to map ours: did it?
            if self.block_manager_threads:
                cap_block_manager_pools(session, self.block_manager_threads)
        log.info("Spark session ready on %s", self.master)
        return session

    def _verdict(self) -> str | None:
        if self.remote:
            stopped = bool(getattr(self._session, "is_stopped", False))
            return health_verdict(None, stopped, self._oom_errors, self.oom_threshold)
        from pyspark import SparkContext

        gateway = SparkContext._gateway
        proc = getattr(gateway, "proc", None) if gateway is not None else None
        exit_code = proc.poll() if proc is not None else None
        stopped = exit_code is None and _context_stopped(self._session)
        if stopped and proc is not None:  # a JVM on its way out (an OutOfMemoryError) stops its context first
            exit_code = _exit_within(proc, JVM_EXIT_GRACE_S)
        return health_verdict(exit_code, stopped, self._oom_errors, self.oom_threshold)

    def _discard(self) -> None:
        session, self._session = self._session, None
        self._oom_errors = 0
        if self.remote:
            with contextlib.suppress(Exception):  # the server may be gone: nothing left to release
                session.stop()
        else:
            end_classic_jvm(session)


# The driver's endpoints whose removal messages run on a pool of their own, and that pool's field.
BLOCK_MANAGER_POOLS = (("org.apache.spark.storage.BlockManagerStorageEndpoint", "asyncThreadPool"),
                       ("org.apache.spark.storage.BlockManagerMasterEndpoint", "askThreadPool"))


def cap_block_manager_pools(session, threads: int) -> int:
    """Keep at most ``threads`` threads in each of the driver's block-manager pools; how many pools were capped.

    Spark builds both pools with 100 core threads, so a message starts a new thread while fewer than 100
    exist, even with all others idle, and a thread leaves only after a minute without work: a driver that
    runs a few stages a second soon holds 200 threads. Spark offers no setting for them, so they are reached
    through its RPC dispatcher's endpoints by reflection (``taskmanager.spark.block-manager-threads``). A
    Spark that keeps them elsewhere loses nothing but the memory: logged, and the session runs as it is.
    """
    jvm = session.sparkContext._jvm
    try:
        env = _private_field(jvm, session.sparkContext._jsc.sc(), "org.apache.spark.SparkContext", "_env")
        rpc_env = _private_field(jvm, env, "org.apache.spark.SparkEnv", "rpcEnv")
        dispatcher = _private_field(jvm, rpc_env, "org.apache.spark.rpc.netty.NettyRpcEnv", "dispatcher")
        endpoints = _private_field(jvm, dispatcher, "org.apache.spark.rpc.netty.Dispatcher", "endpointRefs")
        pools = [(jvm.java.lang.Class.forName(class_name), _declared_field(jvm, class_name, name))
                 for class_name, name in BLOCK_MANAGER_POOLS]
        capped = 0
        for endpoint in endpoints.keySet().toArray():
            for endpoint_class, field in pools:
                if endpoint_class.isInstance(endpoint):
                    pool = field.get(endpoint)
                    pool.setCorePoolSize(threads)
                    pool.setMaximumPoolSize(threads)
                    capped += 1
    except Exception as err:  # noqa: BLE001 - another Spark's internals: its defaults stand
        log.warning("could not cap Spark's block-manager threads (%s); its pools keep up to 100 threads each", err)
        return 0
    if capped < len(BLOCK_MANAGER_POOLS):
        log.warning("found %d of Spark's %d block-manager pools to cap", capped, len(BLOCK_MANAGER_POOLS))
    return capped


def _private_field(jvm, obj, class_name: str, name: str):
    """``obj``'s field ``name`` declared by ``class_name``."""
    return _declared_field(jvm, class_name, name).get(obj)


def _declared_field(jvm, class_name: str, name: str):
    """The field ``name`` of ``class_name``, made readable. The class is looked up by name, never by asking an
    object: py4j resolves an object's methods by loading every class their signatures name, and one of
    SparkEnv's names a class that is not on the driver's class path (its error ends the py4j connection)."""
    field = jvm.java.lang.Class.forName(class_name).getDeclaredField(name)
    field.setAccessible(True)
    return field


def _classic_jvm_pid() -> int | None:
    from pyspark import SparkContext

    gateway = SparkContext._gateway
    return gateway.proc.pid if gateway is not None and getattr(gateway, "proc", None) else None


def _exit_within(proc, timeout: float) -> int | None:
    """The process's exit code if it exits within ``timeout`` seconds, else None."""
    try:
        return proc.wait(timeout)
    except subprocess.TimeoutExpired:
        return None


def _context_stopped(session) -> bool:
    try:
        return bool(session.sparkContext._jsc.sc().isStopped())
    except Exception:  # noqa: BLE001 - a JVM that cannot answer is as good as stopped
        return True


def end_classic_jvm(session) -> None:
    """Stop the session and end its JVM process, so that the next session launches a fresh one.

    PySpark keeps one JVM per Python process for good and offers no way to relaunch it, so this resets
    the handful of class attributes its launcher checks (as a stopped-then-killed gateway leaves them).
    """
    from pyspark import SparkContext
    from pyspark.sql import SparkSession, SQLContext

    context = SparkContext._active_spark_context
    gateway = SparkContext._gateway
    proc = getattr(gateway, "proc", None) if gateway is not None else None
    if proc is None or proc.poll() is None:  # a JVM that exited cannot answer: skip to what is left
        with contextlib.suppress(Exception):
            session.stop()
    server = getattr(context, "_accumulatorServer", None)
    if server is not None:
        with contextlib.suppress(Exception):
            server.shutdown()
        context._accumulatorServer = None
    if gateway is not None:
        with contextlib.suppress(Exception):
            gateway.shutdown()
    if proc is not None:
        proc.kill()
        proc.wait(30)
    with SparkContext._lock:
        SparkContext._gateway = SparkContext._jvm = SparkContext._active_spark_context = None
    SparkSession._instantiatedSession = SparkSession._activeSession = None
    SQLContext._instantiatedContext = None
