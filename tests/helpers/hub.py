"""A real JupyterHub for tests: the ``jupyterhub`` package (the test extra), its proxy ``configurable-http-proxy``
from npm, the dummy authenticator and a local-process spawner, all on 127.0.0.1 ports of their own.

The proxy is installed once into ``~/.cache/flinkbench/`` (``FLINKBENCH_CACHE`` moves it) with npm, under a lock;
a machine without npm, or an install that fails, fails the test with npm's output (nothing is skipped). The hub
runs in a session of its own; stopping it stops the students' servers (the hub's cleanup), and any of the
processes it started that outlives that is ended by its pid.
"""
from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import urllib.error
import urllib.request
from pathlib import Path

import psutil

from tests.helpers.clusters import wait_until
from tests.helpers.ports import free_port
from tests.helpers.pyflink import cache_root
from tests.helpers.servers import log_tail, stop_group

PROXY_VERSION = "5"
START_TIMEOUT_S = 120.0


def configurable_http_proxy() -> Path:
    """The proxy's executable, installed from npm into the cache the first time."""
    home = cache_root() / "configurable-http-proxy"
    home.mkdir(parents=True, exist_ok=True)
    binary = home / "node_modules" / ".bin" / "configurable-http-proxy"
    with open(f"{home}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not binary.exists():
            npm = shutil.which("npm")
            assert npm, "configurable-http-proxy comes from npm, and npm is not on the PATH (install nodejs and npm)"
            done = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--prefix", str(home),
                                   f"configurable-http-proxy@{PROXY_VERSION}"], capture_output=True, text=True,
                                  timeout=600)
            assert done.returncode == 0 and binary.exists(), f"npm install configurable-http-proxy failed:\n{done.stderr}"
    return binary


class JupyterHub:
    """A hub whose students' servers are JupyterLab with Flinkbench, in front of one cluster (kernel_magics.hub)."""

    def __init__(self, workdir: Path, jobmanager_url: str, token_file: str, slots: int, admins: tuple[str, ...] = ()):
        self.workdir = workdir
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.port, self.hub_port, self.api_port = free_port(), free_port(), free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.tokens_dir = workdir / "students"
        self.log_path = workdir / "jupyterhub.log"
        self.runtime_dir = tempfile.mkdtemp(prefix="hub-")  # short: kernels' socket paths must stay under 108 bytes
        self.config = workdir / "jupyterhub_config.py"
        self.config.write_text(self._config(jobmanager_url, token_file, slots, admins))
        self.popen: subprocess.Popen | None = None

    def _config(self, url: str, token_file: str, slots: int, admins: tuple[str, ...]) -> str:
        singleuser = Path(sys.executable).parent / "jupyterhub-singleuser"
        labconfig = self.workdir / "config" / "labconfig"
        labconfig.mkdir(parents=True, exist_ok=True)
        (labconfig / "page_config.json").write_text(json.dumps(
            {"disabledExtensions": {"@jupyterlab/apputils-extension:announcements": True}}))
        return textwrap.dedent(f"""
            from kernel_magics.hub import ClassCluster

            c.JupyterHub.ip, c.JupyterHub.port = "127.0.0.1", {self.port}
            c.JupyterHub.hub_ip, c.JupyterHub.hub_port = "127.0.0.1", {self.hub_port}
            c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{self.api_port}"
            c.ConfigurableHTTPProxy.command = [{str(configurable_http_proxy())!r}]
            c.JupyterHub.db_url = "sqlite:///{self.workdir}/jupyterhub.sqlite"
            c.JupyterHub.cookie_secret_file = "{self.workdir}/cookie_secret"
            c.JupyterHub.authenticator_class = "dummy"
            c.Authenticator.allow_all = True
            c.Authenticator.admin_users = set({list(admins)!r})
            c.JupyterHub.spawner_class = "simple"
            c.SimpleLocalProcessSpawner.home_dir_template = "{self.workdir}/homes/{{username}}"
            c.Spawner.cmd = [{str(singleuser)!r}]
            c.Spawner.default_url = "/lab"
            c.Spawner.args = ["--allow-root", "--KernelManager.transport=ipc", "--LabApp.news_url=",
                              "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
            c.Spawner.environment = {{"JUPYTER_CONFIG_DIR": "{self.workdir}/config",
                                      "JUPYTER_RUNTIME_DIR": "{self.runtime_dir}", "PYTHONUNBUFFERED": "1"}}
            c.Spawner.start_timeout = c.Spawner.http_timeout = {int(START_TIMEOUT_S)}
            ClassCluster({url!r}, token_file={token_file!r}, tokens_dir="{self.tokens_dir}", slots={slots}).configure(c)
            """)

    def start(self) -> JupyterHub:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("FLINKBENCH_", "JUPYTER"))}
        env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])
        with open(self.log_path, "ab") as log:
            self.popen = subprocess.Popen([str(Path(sys.executable).parent / "jupyterhub"), "-f", str(self.config)],
                                          stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env,
                                          cwd=str(self.workdir), start_new_session=True)
        wait_until(self._ready, START_TIMEOUT_S, f"JupyterHub on port {self.port} (log: {self.log_path})")
        return self

    def _ready(self) -> bool:
        if self.popen is not None and self.popen.poll() is not None:
            raise RuntimeError(f"JupyterHub exited with {self.popen.returncode}:\n{self.log_tail()}")
        try:
            with urllib.request.urlopen(f"{self.url}/hub/api/", timeout=5) as answer:
                return answer.status == 200
        except (OSError, urllib.error.URLError):
            return False

    def token_of(self, student: str) -> str:
        """The student's Flinkbench token, as the hub's hook keeps it for their server."""
        return (self.tokens_dir / student).read_text().strip()

    def stop(self) -> None:
        """SIGTERM: the hub stops the students' servers (and their kernels) and its proxy; stragglers are killed."""
        if self.popen is None:
            return
        started = _descendants(self.popen.pid)
        stop_group(self.popen, 60)
        for process in started:
            try:
                process.kill()
            except psutil.Error:
                pass
        shutil.rmtree(self.runtime_dir, ignore_errors=True)

    def log_tail(self, lines: int = 40) -> str:
        return log_tail(self.log_path, lines)

    def __enter__(self) -> JupyterHub:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def _descendants(pid: int) -> list[psutil.Process]:
    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.Error:
        return []
