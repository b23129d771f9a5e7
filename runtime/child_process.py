"""Flinkbench processes started by another one: LocalCluster's JobManagers and TaskManagers, and the
TaskManagers a JobManager's local resource provider starts.

Each child runs ``python -m runtime.cli <role> ...`` in a process group of its own (so that signalling
the group reaches its Spark JVM too), is killed by the kernel when its parent dies, and writes its
output to a log file.
"""
from __future__ import annotations

import asyncio
import ctypes
import json
import os
import signal
import subprocess
from dataclasses import dataclass


@dataclass
class ChildProcess:
    role: str
    name: str
    popen: subprocess.Popen
    log_path: str
    ready_file: str | None = None  # a JobManager's: where it writes its address once it serves

    @property
    def pid(self) -> int:
        return self.popen.pid

    def alive(self) -> bool:
        return self.popen.poll() is None

    def signal_group(self, sig: int) -> None:
        """Signal the process group: the process and everything it started (its Spark JVM)."""
        try:
            os.killpg(self.popen.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass

    def terminate(self) -> None:
        """SIGTERM the process alone, to stop in order: a TaskManager ends its tasks, then its own Spark JVM.
        Signalling its group too would end the JVM under its running tasks, which then started a fresh one
        while their TaskManager stopped; :meth:`signal_group` with SIGKILL is the fallback after a grace period."""
        try:
            self.popen.send_signal(signal.SIGTERM)
        except ProcessLookupError:
            pass

    def kill(self) -> None:
        """SIGKILL the process group and reap the process."""
        self.signal_group(signal.SIGKILL)
        self.popen.wait()

    def log_tail(self, lines: int = 30) -> str:
        try:
            with open(self.log_path, encoding="utf-8", errors="replace") as fh:
                return "".join(fh.readlines()[-lines:])
        except OSError:
            return ""


def die_with_parent() -> None:
    """In the child before exec: new process group, and SIGKILL when the parent goes away."""
    os.setsid()
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except OSError:
        pass


def dynamic_properties(conf: dict[str, str]) -> list[str]:
    """``-D key=value`` flags for every entry of ``conf``."""
    out = []
    for key, value in conf.items():
        out += ["-D", f"{key}={value}"]
    return out


def read_ready_file(path: str) -> dict | None:
    """What a JobManager wrote to its ready file (url, port, token_file, pid); None until it has (the file
    is written whole, by rename)."""
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except FileNotFoundError:
        return None


async def jobmanager_url_from(ready_file: str, poll_s: float = 0.05) -> str:
    """The URL in a JobManager's ready file, once it is there: a TaskManager started together with its
    JobManager (by LocalCluster) starts its Spark JVM meanwhile instead of after it."""
    while (info := read_ready_file(ready_file)) is None:
        await asyncio.sleep(poll_s)
    return info["url"]


def spawn_runtime(role: str, name: str, args: list[str], working_dir: str, python: str) -> ChildProcess:
    """Start ``python -m runtime.cli <args>`` in ``working_dir``, logging to ``<working_dir>/<name>.log``."""
    log_path = os.path.join(working_dir, f"{name}.log")
    env = dict(os.environ)
    env.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    env.setdefault("PYSPARK_PYTHON", python)
    env["PYTHONUNBUFFERED"] = "1"
    with open(log_path, "ab") as log:
        popen = subprocess.Popen([python, "-m", "runtime.cli", *args], stdout=log, stderr=subprocess.STDOUT,
                                 stdin=subprocess.DEVNULL, env=env, preexec_fn=die_with_parent, cwd=working_dir)
    return ChildProcess(role, name, popen, log_path)
