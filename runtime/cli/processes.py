"""Cluster processes from the command line: a JobManager or a TaskManager in the foreground, or a
local cluster (runtime.cluster.LocalCluster) in the foreground or detached.

``cluster start`` records the running cluster in ``~/.flinkbench/current-cluster.json`` (its REST URL,
token file, logs and the pid of the process that owns it), so that later commands find it without
flags and ``cluster stop`` knows whom to stop. ``--detach`` starts that owning process in a session of
its own, waits until it has recorded the cluster, and returns.
"""
from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time

from runtime import tls
from runtime.cli.commands import COMMANDS
from runtime.config import Configuration, parse_dynamic_properties, read_yaml
from runtime.errors import ClusterError
from runtime.java import check_java
from runtime.process_info import process_alive
from runtime.security import read_token_file

DETACH_TIMEOUT_S = 300.0
STOP_TIMEOUT_S = 60.0


def state_dir() -> str:
    return os.path.join(os.path.expanduser("~"), ".flinkbench")


def recorded() -> dict | None:
    """The cluster ``cluster start`` recorded, or None."""
    try:
        with open(os.path.join(state_dir(), "current-cluster.json"), encoding="utf-8") as fh:
            return json.load(fh)
    except (OSError, ValueError):
        return None


def _record(info: dict) -> None:
    os.makedirs(state_dir(), exist_ok=True)
    path = os.path.join(state_dir(), "current-cluster.json")
    with open(path + ".tmp", "w", encoding="utf-8") as fh:
        json.dump(info, fh)
    os.replace(path + ".tmp", path)


def _forget(pid: int | None) -> None:
    """Remove the record if it names ``pid`` (any record when None)."""
    info = recorded()
    if info is not None and (pid is None or info.get("pid") == pid):
        os.remove(os.path.join(state_dir(), "current-cluster.json"))


def jobmanager_url(address: str, secure: bool = False) -> str:
    """``host:port`` (Flink's -m) or a URL, as a URL (https when ``secure``: REST TLS is on); several may
    be given, comma-separated."""
    scheme = "https" if secure else "http"
    return ",".join(a if "://" in a else f"{scheme}://{a}" for a in (p.strip() for p in address.split(",")) if a)


def _configuration(args) -> Configuration:
    return Configuration.load(args.conf, parse_dynamic_properties(args.dynamic))


# -- one process ------------------------------------------------------------------------------
def jobmanager(args) -> int:
    from runtime.jobmanager.jobmanager import serve

    _logging()
    asyncio.run(serve(_configuration(args), args.ready_file, COMMANDS))
    return 0


def historyserver(args) -> int:
    from runtime.history.server import serve

    _logging()
    asyncio.run(serve(_configuration(args)))
    return 0


def taskmanager(args) -> int:
    from runtime.taskmanager import allocators

    conf = _configuration(args)
    allocators.prepare_environment(conf)  # before the TaskManager's modules load pyarrow
    from runtime.taskmanager.task_manager import serve

    if not conf.get("spark.remote"):
        check_java()
    _logging()
    address = args.jobmanager or f"{conf.get('jobmanager.rpc.address')}:{conf.get('rest.port')}"
    url = None if args.jobmanager_ready_file else jobmanager_url(address, tls.enabled(conf, tls.REST))
    asyncio.run(serve(conf, url, read_token_file(args.token_file), args.slots, args.jobmanager_ready_file))
    return 0


def _logging() -> None:
    logging.basicConfig(level=os.environ.get("FLINKBENCH_LOG_LEVEL", "INFO"),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("tornado.access").setLevel(logging.WARNING)
    logging.getLogger("py4j").setLevel(logging.WARNING)


# -- a local cluster --------------------------------------------------------------------------
def cluster(args) -> int:
    return _start(args) if args.action == "start" else _stop()


def _start(args) -> int:
    conf = _configuration(args)  # every key checked before anything starts
    current = recorded()
    if current and process_alive(current.get("pid", 0)):
        raise ClusterError(f"a cluster is already running at {current['url']} (pid {current['pid']}); "
                           "'flinkbench cluster stop' stops it")
    if args.detach:
        return _start_detached(args, conf)
    from runtime.cluster import LocalCluster

    config = {"resourcemanager.provider": "local",  # grows with the jobs; --taskmanagers is where it starts
              **(read_yaml(args.conf) if args.conf else {}), **parse_dynamic_properties(args.dynamic)}
    slots = args.slots or conf.get("taskmanager.numberOfTaskSlots")
    with LocalCluster(args.taskmanagers, slots, config) as local:
        _record({"url": local.url, "token_file": local.token_file, "trust_cert": local.trust_cert,
                 "logs": local.working_dir, "pid": os.getpid(),
                 "taskmanagers": args.taskmanagers, "slots": slots})
        try:
            _describe(recorded() or {})
            print("Ctrl-C or 'flinkbench cluster stop' stops it.", flush=True)
            _serve_until_stopped(local)
        finally:
            _forget(os.getpid())
    print(f"cluster stopped{'; ' + local.kept if local.kept else ''}", flush=True)
    return 0


def _describe(info: dict) -> None:
    print(f"cluster running: JobManager {info['url']}, {info['taskmanagers']} TaskManagers x {info['slots']} slots")
    print(f"token file: {info['token_file']}\nlogs: {info['logs']}")
    print(f"dashboard: {info['url']}/dashboard ('flinkbench dashboard' prints a link that opens it logged in)",
          flush=True)


def _serve_until_stopped(local) -> None:
    """Until SIGINT or SIGTERM (what 'cluster stop' sends), or until the JobManager dies."""
    stopping = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stopping.set())
    while not stopping.wait(1.0):
        if not local.jobmanager.alive():
            print(f"the JobManager exited (code {local.jobmanager.popen.returncode}); stopping the cluster",
                  file=sys.stderr)
            return


def _start_detached(args, conf: Configuration) -> int:
    if args.taskmanagers and not conf.get("spark.remote"):
        check_java()  # say it here, in one line, rather than in the background process's log
    command = [sys.executable, "-m", "runtime.cli", "cluster", "start", "--taskmanagers", str(args.taskmanagers)]
    command += ["--slots", str(args.slots)] if args.slots else []
    command += ["--conf", os.path.abspath(args.conf)] if args.conf else []
    for item in args.dynamic:
        command += ["-D", item]
    os.makedirs(state_dir(), exist_ok=True)
    log_path = os.path.join(state_dir(), "cluster.log")
    with open(log_path, "wb") as log:
        owner = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                 start_new_session=True)
    deadline = time.monotonic() + DETACH_TIMEOUT_S
    while (recorded() or {}).get("pid") != owner.pid:
        if owner.poll() is not None:
            raise ClusterError(f"the cluster did not start: {_last_line(log_path)} (log: {log_path})")
        if time.monotonic() > deadline:
            owner.kill()
            raise ClusterError(f"the cluster did not start within {DETACH_TIMEOUT_S:g} s (log: {log_path})")
        time.sleep(0.2)
    _describe(recorded() or {})
    print(f"running in the background (pid {owner.pid}, output in {log_path}); 'flinkbench cluster stop' stops it.")
    return 0


def _last_line(path: str) -> str:
    with open(path, encoding="utf-8", errors="replace") as fh:
        lines = [line.strip() for line in fh if line.strip()]
    return lines[-1].removeprefix("flinkbench: ") if lines else "it exited without a word"


def _stop() -> int:
    info = recorded()
    if info is None:
        raise ClusterError("no cluster to stop: none was started with 'flinkbench cluster start'")
    pid = info["pid"]
    if not process_alive(pid):
        _forget(pid)
        print(f"the cluster at {info['url']} was no longer running (pid {pid}); its record is removed")
        return 0
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_TIMEOUT_S
    while process_alive(pid):
        if time.monotonic() > deadline:
            raise ClusterError(f"the cluster's process {pid} did not stop within {STOP_TIMEOUT_S:g} s")
        time.sleep(0.2)
    _forget(pid)
    print(f"cluster at {info['url']} stopped")
    return 0
