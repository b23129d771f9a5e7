"""Typed configuration with Flink's key names.

Every option the runtime reads is declared once in ``OPTIONS`` with its type, default and meaning.
Values come, lowest precedence first, from the defaults, a YAML file, the environment
(``FLINKBENCH_`` + the key upper-cased with ``.`` and ``-`` turned into ``_``), and explicit
overrides (command-line ``-D key=value`` flags, per-job settings), each read by a parser of
runtime.config_values. An unknown key or a value of the wrong type raises :class:`ConfigError` naming
the key and what was expected.
"""
from __future__ import annotations

import difflib
import os
import re
from dataclasses import dataclass
from typing import Any
from collections.abc import Callable, Iterable, Mapping

import yaml

from runtime.config_values import (format_duration, parse_bool, parse_duration, parse_float, parse_int, parse_ports,
                                   parse_str)
from runtime.errors import ConfigurationError
from runtime.timezones import parse_zone


class ConfigError(ConfigurationError):
    """A configuration key is unknown or its value cannot be read as the declared type."""


def read_duration(what: str, value: Any) -> float:
    """``value`` as seconds (see parse_duration), or a ConfigError that names ``what`` and the value."""
    try:
        return parse_duration(value)
    except (ValueError, TypeError) as err:
        raise ConfigError(f"{what}: expected {err}, got {value!r}") from None


@dataclass(frozen=True)
class Option:
    key: str
    parse: Callable[[Any], Any]
    default: Any
    description: str
    choices: tuple[str, ...] | None = None
    minimum: float | None = None

    def read(self, raw: Any) -> Any:
        """Convert ``raw`` to this option's type or raise ConfigError naming the key."""
        if raw is None:
            return None
        try:
            value = self.parse(raw)
        except (ValueError, TypeError) as err:  # TypeError: a list or mapping where a scalar belongs
            raise ConfigError(f"config key '{self.key}': expected {err}, got {raw!r}") from None
        if self.choices is not None and value not in self.choices:
            raise ConfigError(f"config key '{self.key}': expected one of {list(self.choices)}, got {raw!r}")
        if self.minimum is not None and value < self.minimum:
            raise ConfigError(f"config key '{self.key}': expected a value >= {self.minimum}, got {raw!r}")
        return value

    @property
    def env_name(self) -> str:
        return "FLINKBENCH_" + re.sub(r"[.\-]", "_", self.key).upper()


def _options(*opts: Option) -> dict[str, Option]:
    return {o.key: o for o in opts}


D, I, B, S = parse_duration, parse_int, parse_bool, parse_str

OPTIONS: dict[str, Option] = _options(
    # JobManager and its REST endpoint
    Option("jobmanager.rpc.address", S, "127.0.0.1", "Host the JobManager is reached at: the default of rest.address, and where a TaskManager started without --jobmanager looks for it (with rest.port)."),
    Option("rest.address", S, "", "Host the REST server advertises to clients, TaskManagers and the HA store; empty means jobmanager.rpc.address."),
    Option("rest.bind-address", S, "", "Address the REST server binds to (0.0.0.0 for every interface); empty means rest.address."),
    Option("rest.port", I, 8081, "REST port; 0 picks a free one.", minimum=0),
    Option("rest.server.max-content-length", I, 64 * 1024 * 1024, "Largest accepted request body in bytes.", minimum=1024),
    Option("security.token-file", S, "", "File holding the cluster token; empty means a fresh token under the cluster's working directory."),
    # TLS (runtime.tls): PEM files; Flink's switches
    Option("security.ssl.rest.enabled", B, False, "TLS on the REST port (REST API, event stream, dashboard, the TaskManagers' control connection) and on the Prometheus endpoints."),
    Option("security.ssl.rest.cert", S, "", "PEM certificate (chain) the REST port and Prometheus endpoints present; its names must cover the address clients use."),
    Option("security.ssl.rest.key", S, "", "PEM private key of security.ssl.rest.cert."),
    Option("security.ssl.rest.trust-cert", S, "", "PEM CA certificate(s) clients verify the REST port against; empty: the system's CAs."),
    Option("security.ssl.internal.enabled", B, False, "Mutual TLS between the cluster's processes: the data exchange between TaskManagers, and the TaskManagers' certificate on the control connection (needs security.ssl.rest.enabled)."),
    Option("security.ssl.internal.cert", S, "", "PEM certificate every JobManager and TaskManager presents to its peers; its names must cover taskmanager.host."),
    Option("security.ssl.internal.key", S, "", "PEM private key of security.ssl.internal.cert."),
    Option("security.ssl.internal.trust-cert", S, "", "PEM CA certificate(s) peers' internal certificates are verified against."),
    Option("cluster.working-dir", S, "", "Directory for the cluster's token, logs and local state; empty picks one under the system temp dir."),
    Option("cluster.fault-injection.enabled", B, False, "Allow killing TaskManagers and JobManagers through the REST API (for teaching)."),
    # TaskManagers
    Option("taskmanager.numberOfTaskSlots", I, 2, "Slots each TaskManager offers.", minimum=1),
    Option("taskmanager.host", S, "127.0.0.1", "Address a TaskManager advertises for data exchange and its Spark driver (spark.driver.host)."),
    Option("taskmanager.resource-id", S, "", "The id a TaskManager registers with; empty picks a fresh one (the local provider names the TaskManagers it starts)."),
    Option("taskmanager.bind-host", S, "", "Address a TaskManager's data server and Spark driver bind to (0.0.0.0 for every interface); empty means taskmanager.host."),
    Option("taskmanager.data.port", I, 0, "Data exchange port of a TaskManager; 0 picks a free one.", minimum=0),
    Option("taskmanager.registration.retry-delay", D, 0.5, "Pause between attempts to (re)connect to the JobManager."),
    Option("taskmanager.network.credits", I, 4, "Buffers a consumer grants per input channel (credit-based flow control).", minimum=1),
    Option("taskmanager.bundle.max-rows", I, 1_000_000, "Most rows a source reads per bundle.", minimum=1),
    Option("taskmanager.bundle.min-rows", I, 1_000, "Fewest rows a source reads per bundle when input is slow.", minimum=1),
    Option("taskmanager.bundle.target-time", D, 0.5, "Bundle duration the sources aim for when sizing bundles."),
    Option("taskmanager.bundle.max-wait", D, 2.0, "Longest a rate-limited source lets its due rows wait to fill a bundle of taskmanager.bundle.min-rows (each bundle is one Spark action, however few its rows)."),
    Option("taskmanager.memory.arrow-allocator", S, "system", "Allocator of a TaskManager's Arrow buffers, its own and those Arrow's C++ code allocates (ARROW_DEFAULT_MEMORY_POOL, set from this key before the process loads pyarrow): system (malloc; freed bundles go back to the kernel) or pyarrow's own mimalloc or jemalloc (they keep freed pages for reuse: about 50 MB more per TaskManager on the clicks job).", choices=("system", "mimalloc", "jemalloc")),
    Option("taskmanager.memory.malloc-arenas", I, 2, "glibc malloc arenas of a TaskManager process and its Spark JVM (MALLOC_ARENA_MAX); each allocating thread otherwise gets its own, up to eight per core, each keeping freed memory. 0 leaves glibc's default.", minimum=0),
    # Spark under every TaskManager
    Option("spark.master", S, "", "Spark master for each TaskManager's session; empty means local[<slots>]."),
    Option("spark.remote", S, "", "Spark Connect address (sc://host:port); used instead of spark.master when set."),
    Option("spark.driver.memory", S, "2g", "Heap of each TaskManager's Spark driver JVM (bundles of up to taskmanager.bundle.max-rows pass through it as Arrow)."),
    Option("spark.sql.shuffle.partitions", I, 0, "Shuffle partitions inside a TaskManager's Spark plans; 0 means the slot count.", minimum=0),
    Option("taskmanager.spark.jvm-options", S, "-XX:+UseSerialGC -Xms64m -XX:MinHeapFreeRatio=20 -XX:MaxHeapFreeRatio=40", "JVM options of each TaskManager's own Spark driver JVM, before spark.driver.extraJavaOptions (which win where they clash). The default keeps the heap near twice what it holds (one JVM per TaskManager): the serial collector, a small initial heap that grows only while less than 20 % of it is free and shrinks past 40 % (a session holds about 75 MB; Java's default initial heap, 1/64 of the machine's memory, soon had every page touched: about 75 MB less per JVM at the same throughput); -XX:TieredStopAtLevel=1 would halve start-up CPU but cost 40 % of sustained throughput."),
    Option("taskmanager.spark.class-archive.enabled", B, True, "Spark driver JVMs map a class-data archive of Spark's classes (written once per machine and installation; runtime.taskmanager.class_archive): a faster start on less CPU."),
    Option("taskmanager.spark.class-archive.dir", S, "", "Folder of the Spark class archives; empty means $XDG_CACHE_HOME/flinkbench (~/.cache/flinkbench)."),
    Option("taskmanager.spark.block-manager-threads", I, 2, "Threads of each of the two pools in which a TaskManager's own Spark driver removes blocks (every finished stage's broadcast, every dropped shuffle). Spark keeps up to 100 in each, one more per message until there are 100, each with about 0.1 MB of stack: 20 MB per JVM for one small message at a time. 0 leaves Spark's pools as they are.", minimum=0),
    Option("taskmanager.spark.oom-restart-threshold", I, 2, "OutOfMemoryErrors after which a TaskManager replaces its Spark JVM with a fresh process (a JVM that exited or a stopped context is replaced at once).", minimum=1),
    # Heartbeats and scheduling
    Option("heartbeat.interval", D, 1.0, "How often TaskManagers heartbeat to the ResourceManager."),
    Option("heartbeat.timeout", D, 6.0, "Silence after which a TaskManager is declared lost."),
    Option("heartbeat.rpc-failure-threshold", I, 2, "Heartbeat intervals a TaskManager may stay disconnected (its control connection closed) before it is declared lost; 0 waits for heartbeat.timeout.", minimum=0),
    Option("slot.request.timeout", D, 60.0, "How long a job waits for slots before it fails."),
    Option("resourcemanager.provider", S, "standalone", "Who starts TaskManagers: standalone (started by hand, they register) or local (the ResourceManager starts TaskManager processes on this host when slots are wanted).", choices=("standalone", "local")),
    Option("resourcemanager.taskmanager-timeout", D, 30.0, "Idle time after which the local provider stops a TaskManager it started."),
    Option("resourcemanager.local.max-taskmanagers", I, 4, "Most TaskManagers in the cluster (those started by hand count too) up to which the local provider starts more.", minimum=0),
    Option("resourcemanager.standby-taskmanagers", I, 0, "Idle TaskManagers the local provider keeps ready (Spark started) beyond what jobs use, so that recovery does not wait for a new JVM.", minimum=0),
    # Jobs
    Option("parallelism.default", I, 1, "Parallelism of operators that set none.", minimum=1),
    Option("pipeline.name", S, "", "The job's name when the program gives none: a SQL job's instead of Flink's insert-into_<sink tables> or collect."),
    Option("pipeline.max-parallelism", I, 128, "Number of key groups; the upper bound for rescaling keyed state.", minimum=1),
    Option("execution.runtime-mode", S, "streaming", "streaming (unbounded) or batch (bounded sources run to FINISHED).", choices=("streaming", "batch")),
    Option("table.local-time-zone", parse_zone, "default", "The SQL session's time zone: TIMESTAMP_LTZ values are instants shown in it (a zone id, an offset such as GMT+08:00, or default: the client machine's)."),
    # Python dependencies of a job (PyFlink's keys): shipped with the job graph to every TaskManager
    Option("python.files", S, "", "Python files and folders (comma-separated) on the Python path of the job's functions, on every TaskManager."),
    Option("python.archives", S, "", "Archives (comma-separated, each path#target_dir) unpacked into the job's folder on every TaskManager; target_dir is the folder they unpack into."),
    Option("python.requirements", S, "", "A requirements file (path, or path#cached_dir of packages to install from) pip installs on every TaskManager for the job."),
    Option("jobmanager.execution.failover-strategy", S, "full", "Which tasks restart on failure (full restarts the job).", choices=("full",)),
    # Checkpoints
    Option("execution.checkpointing.interval", D, 0.0, "Checkpoint interval; 0 disables periodic checkpoints."),
    Option("execution.checkpointing.timeout", D, 600.0, "A checkpoint not complete after this fails."),
    Option("execution.checkpointing.min-pause", D, 0.0, "Least pause between the end of one checkpoint and the next trigger."),
    Option("execution.checkpointing.max-concurrent-checkpoints", I, 1, "Checkpoints in flight at once.", minimum=1),
    Option("execution.checkpointing.tolerable-failed-checkpoints", I, 2**31 - 1, "Consecutive failed checkpoints a job tolerates before failing.", minimum=0),
    Option("state.checkpoints.dir", S, "", "URL of checkpoint storage (file://, s3://, any fsspec filesystem); empty means under the working dir."),
    Option("state.savepoints.dir", S, "", "Default savepoint URL; empty means <state.checkpoints.dir>/savepoints."),
    Option("execution.state-recovery.ignore-unclaimed-state", B, False, "A job started from a savepoint may drop state that no operator of it claims (an operator removed or its uid changed): the CLI's --allowNonRestoredState. Otherwise such a start is refused naming the operators."),
    Option("state.checkpoints.num-retained", I, 1, "Completed checkpoints kept.", minimum=1),
    Option("execution.checkpointing.incremental", B, False, "Checkpoints upload only the key groups of keyed state that changed since the subtask's last completed checkpoint and refer to the rest (shared files under <state.checkpoints.dir>/<job>/shared); savepoints are always full."),
    # Restart strategies
    Option("restart-strategy.type", S, None, "How failed jobs restart; unset means none without checkpointing, fixed-delay with it.", choices=("fixed-delay", "failure-rate", "exponential-delay", "none")),
    Option("restart-strategy.fixed-delay.attempts", I, 2**31 - 1, "Restarts before the job fails.", minimum=0),
    Option("restart-strategy.fixed-delay.delay", D, 1.0, "Pause before each restart."),
    Option("restart-strategy.failure-rate.max-failures-per-interval", I, 3, "Failures allowed per interval.", minimum=1),
    Option("restart-strategy.failure-rate.failure-rate-interval", D, 60.0, "Window over which failures are counted."),
    Option("restart-strategy.failure-rate.delay", D, 1.0, "Pause before each restart."),
    Option("restart-strategy.exponential-delay.initial-backoff", D, 1.0, "First pause."),
    Option("restart-strategy.exponential-delay.max-backoff", D, 60.0, "Longest pause."),
    Option("restart-strategy.exponential-delay.backoff-multiplier", parse_float, 2.0, "Growth of the pause per failure.", minimum=1.0),
    Option("restart-strategy.exponential-delay.reset-backoff-threshold", D, 3600.0, "Quiet time after which the pause resets."),
    Option("restart-strategy.exponential-delay.attempts-before-reset-backoff", I, 2**31 - 1, "Restarts before the job fails.", minimum=0),
    # High availability
    Option("high-availability.type", S, "none", "none, file (several JobManagers on one host) or zookeeper.", choices=("none", "file", "zookeeper")),
    Option("high-availability.storageDir", S, "", "Directory or fsspec URL for HA data: the lease and job store (file HA), push logs and collected rows (both)."),
    Option("high-availability.cluster-id", S, "default", "Names this cluster within the HA store."),
    Option("high-availability.zookeeper.quorum", S, "", "ZooKeeper connect string, e.g. 127.0.0.1:2181."),
    Option("high-availability.zookeeper.path.root", S, "/flinkbench", "Root znode for this installation."),
    Option("high-availability.lease-duration", D, 3.0, "How long a leader's lease lasts without renewal (file HA)."),
    # History: archives of ended jobs, and the server that shows them
    Option("jobmanager.archive.fs.dir", S, "", "Directory or fsspec URL (file://, s3://) the JobManager writes an archive of every finished, failed or cancelled job to (graph, subtasks with their final metrics, exceptions, checkpoints), for the history server and for its own listing after a restart; empty: no archives."),
    Option("historyserver.archive.fs.dir", S, "", "Comma-separated directories or fsspec URLs the history server reads job archives from; empty means jobmanager.archive.fs.dir."),
    Option("historyserver.archive.fs.refresh-interval", D, 10.0, "How often the history server looks for new archives."),
    Option("historyserver.archive.retained-jobs", I, -1, "Most archived jobs the history server shows (the newest); -1 keeps them all.", minimum=-1),
    Option("historyserver.web.address", S, "127.0.0.1", "Address the history server binds and advertises."),
    Option("historyserver.web.port", I, 8082, "Port of the history server; 0 picks a free one.", minimum=0),
    # Metrics
    Option("metrics.reporter.prom.port", parse_ports, "", "Port or range (9250-9260) of the Prometheus endpoint each JobManager and TaskManager serves (token-protected); empty: none."),
)


class Configuration:
    """An immutable-by-convention mapping of validated option values."""

    def __init__(self, values: Mapping[str, Any] | None = None):
        self._values: dict[str, Any] = {}
        if values:
            self.update(values)

    # -- building -----------------------------------------------------------------------------
    @classmethod
    def load(cls, path: str | None = None, overrides: Mapping[str, Any] | None = None,
             environ: Mapping[str, str] | None = None) -> Configuration:
        """Defaults < YAML file < environment < overrides. Raises ConfigError on any bad key."""
        conf = cls()
        if path:
            conf.update(read_yaml(path))
        conf.update(from_environment(os.environ if environ is None else environ))
        if overrides:
            conf.update(overrides)
        return conf

    def update(self, values: Mapping[str, Any]) -> Configuration:
        for key, raw in values.items():
            self._values[key] = option(key).read(raw)
        return self

    def with_overrides(self, values: Mapping[str, Any] | None) -> Configuration:
        copy = Configuration()
        copy._values = dict(self._values)
        return copy.update(values or {})

    # -- reading ------------------------------------------------------------------------------
    def get(self, key: str) -> Any:
        value = self._values.get(key)
        return option(key).default if value is None else value

    def __getitem__(self, key: str) -> Any:
        return self.get(key)

    def explicit(self) -> dict[str, Any]:
        """Only the values set on top of the defaults, in their raw typed form."""
        return dict(self._values)

    def as_flink_entries(self) -> list[dict[str, str]]:
        """Everything in force as Flink's ``GET /jobmanager/config`` list of {key, value}."""
        return [{"key": k, "value": render(k, self.get(k))} for k in sorted(set(OPTIONS) | set(self._values))]

    def spark_settings(self) -> dict[str, str]:
        """Every ``spark.*`` key set explicitly, rendered as Spark reads it."""
        return {k: render(k, v) for k, v in self._values.items() if k.startswith(SPARK_PREFIX)}

    def rest_address(self) -> str:
        """The host the REST server advertises (``rest.address``, else ``jobmanager.rpc.address``)."""
        return self.get("rest.address") or self.get("jobmanager.rpc.address")

    def rest_bind_address(self) -> str:
        return self.get("rest.bind-address") or self.rest_address()

    def taskmanager_bind_host(self) -> str:
        return self.get("taskmanager.bind-host") or self.get("taskmanager.host")

    def as_strings(self) -> dict[str, str]:
        """The explicit values rendered back to strings, for passing to a child process."""
        return {k: render(k, v) for k, v in self._values.items()}


SPARK_PREFIX = "spark."
JAVA_STORE_KEYS = frozenset({"keystore", "truststore", "keystore-password", "truststore-password", "key-password",
                             "keystore-type", "truststore-type"})  # Flink's JKS/PKCS12 keys; TLS here takes PEM


def option(key: str) -> Option:
    """The declared option ``key``; any other ``spark.*`` key is a string handed to each TaskManager's
    Spark session as it is (so every Spark setting is reachable with ``-D spark.*``)."""
    try:
        return OPTIONS[key]
    except KeyError:
        if key.startswith(SPARK_PREFIX) and len(key) > len(SPARK_PREFIX):
            return Option(key, S, None, "Passed to each TaskManager's Spark session.")
        if key.startswith("security.ssl.") and key.rsplit(".", 1)[-1] in JAVA_STORE_KEYS:
            scope = key.split(".")[2]
            raise ConfigError(f"config key '{key}': Flinkbench reads PEM files, not Java keystores: set "
                              f"security.ssl.{scope}.cert, .key and .trust-cert (see the README's TLS section)") from None
        close = suggestion(key)
        hint = f"; did you mean {close!r}?" if close else ""
        raise ConfigError(f"unknown config key '{key}'{hint}") from None


SUGGESTION_CUTOFF = 0.8  # difflib's similarity ratio: a typo or two in a key, not a key that merely shares a word


def suggestion(key: str) -> str | None:
    """The declared key ``key`` was most likely meant as: one a typo or two away (case aside), or the one key
    it is the beginning of (``parallelism`` for ``parallelism.default``); None when no key is close, since
    a key that only shares its last word (``no.such.key``, ``security.ssl.rest.key``) misleads."""
    by_lower = {k.lower(): k for k in OPTIONS}
    close = difflib.get_close_matches(key.lower(), list(by_lower), n=1, cutoff=SUGGESTION_CUTOFF)
    if close:
        return by_lower[close[0]]
    longer = [k for k in OPTIONS if k.lower().startswith(key.lower() + ".")]
    return longer[0] if len(longer) == 1 else None


def render(key: str, value: Any) -> str:
    """``value`` of option ``key`` as Flink writes it in a configuration file."""
    if option(key).parse is parse_duration:
        return format_duration(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def read_yaml(path: str) -> dict[str, Any]:
    """A flat YAML mapping of keys to values (nested mappings are joined with dots)."""
    try:
        with open(path, encoding="utf-8") as fh:
            data = yaml.safe_load(fh) or {}
    except OSError as err:
        raise ConfigError(f"cannot read config file {path}: {err.strerror}") from None
    except yaml.YAMLError as err:
        raise ConfigError(f"config file {path} is not valid YAML: {err}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"config file {path} must hold a mapping of keys to values")
    return dict(_flatten(data))


def _flatten(data: Mapping[str, Any], prefix: str = "") -> Iterable[tuple[str, Any]]:
    for key, value in data.items():
        full = f"{prefix}{key}"
        if isinstance(value, dict) and full not in OPTIONS:
            yield from _flatten(value, full + ".")
        else:
            yield full, value


def from_environment(environ: Mapping[str, str]) -> dict[str, Any]:
    """Options set through environment variables (``FLINKBENCH_`` and the key in capitals, ``.``/``-`` as ``_``)."""
    return {opt.key: environ[opt.env_name] for opt in OPTIONS.values() if opt.env_name in environ}


def parse_dynamic_properties(items: Iterable[str]) -> dict[str, str]:
    """``-D key=value`` command-line flags as a dict; a flag without '=' is an error."""
    result = {}
    for item in items:
        if "=" not in item:
            raise ConfigError(f"-D {item!r}: expected key=value")
        key, value = item.split("=", 1)
        option(key.strip())
        result[key.strip()] = value.strip()
    return result
