"""A real JupyterLab server for tests: own port, known token, temp root and config directories."""
from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request

from tests.helpers.clusters import wait_until
from tests.helpers.ports import free_port
from tests.helpers.servers import log_tail, stop_group

START_TIMEOUT_S = 60.0


class _Stay(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


class JupyterLabServer:
    """``jupyter lab`` in its own process group, isolated from the user's Jupyter config and data."""

    def __init__(self, workdir, env: dict[str, str | None] | None = None, server_extension_flag: bool = False):
        """``env`` adds to this process's environment; a None value removes that variable."""
        self.workdir = workdir
        self.root = workdir / "root"
        self.root.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.token = secrets.token_hex(16)
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = workdir / "jupyter.log"
        self.extra_env = env or {}
        # Tests of the server extension alone enable it on the command line, so they need no npm build;
        # the panel's tests rely on the installed config, as a user's JupyterLab does.
        self.server_extension_flag = server_extension_flag
        self.popen: subprocess.Popen | None = None
        # Kernels use Unix sockets named after their connection files here (``--KernelManager.transport=ipc``, so
        # no TCP port can be taken between its choice and the kernel's bind), and a socket's path must stay under
        # 108 bytes: a short directory of its own rather than one under the test's deep tmp_path.
        self.runtime_dir = tempfile.mkdtemp(prefix="lab-")

    def start(self) -> JupyterLabServer:
        # The news toast would cover parts of the page in screenshots and clicks.
        labconfig = self.workdir / "config" / "labconfig"
        labconfig.mkdir(parents=True, exist_ok=True)
        (labconfig / "page_config.json").write_text(json.dumps(
            {"disabledExtensions": {"@jupyterlab/apputils-extension:announcements": True}}))
        env = {**{k: v for k, v in os.environ.items() if self.extra_env.get(k, "") is not None},
               **{k: v for k, v in self.extra_env.items() if v is not None},
               "JUPYTER_CONFIG_DIR": str(self.workdir / "config"),
               "JUPYTER_RUNTIME_DIR": self.runtime_dir,
               "IPYTHONDIR": str(self.workdir / "ipython"),
               "PYTHONUNBUFFERED": "1"}
        args = [sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1", f"--port={self.port}",
                f"--IdentityProvider.token={self.token}", f"--ServerApp.root_dir={self.root}",
                "--ServerApp.port_retries=0", "--LabApp.news_url=", "--KernelManager.transport=ipc",
                "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
                f"--LabApp.user_settings_dir={self.workdir / 'user-settings'}",
                f"--LabApp.workspaces_dir={self.workdir / 'workspaces'}"]
        if os.geteuid() == 0:  # CI machines run as root; Jupyter refuses that unless told
            args.append("--allow-root")
        if self.server_extension_flag:
            args.append("--ServerApp.jpserver_extensions=kernel_magics.server=True")
        with open(self.log_path, "ab") as log:
            self.popen = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                          env=env, cwd=str(self.root), start_new_session=True)
        wait_until(self._ready, START_TIMEOUT_S, f"JupyterLab on port {self.port} (log: {self.log_path})")
        return self

    def _ready(self) -> bool:
        if self.popen.poll() is not None:
            raise RuntimeError(f"JupyterLab exited with {self.popen.returncode}:\n{self.log_tail()}")
        try:
            return self.request("GET", "/api/status")[0] == 200
        except OSError:
            return False

    def stop(self) -> None:
        """SIGTERM so the server extension stops what it started, then SIGKILL the group if it lingers."""
        stop_group(self.popen, 30)
        shutil.rmtree(self.runtime_dir, ignore_errors=True)

    def log_tail(self, lines: int = 40) -> str:
        return log_tail(self.log_path, lines)

    def request(self, method: str, path: str, body=None, token: str | None = "default",
                headers: dict | None = None, follow: bool = True) -> tuple[int, dict, bytes]:
        """One HTTP call; ``token=None`` sends no credentials; ``follow=False`` answers a redirect itself.
        Returns (status, headers, body)."""
        data = json.dumps(body).encode() if body is not None else (b"" if method in ("POST", "PATCH") else None)
        req = urllib.request.Request(self.url + path, data=data, method=method, headers=headers or {})
        if token is not None:
            req.add_header("Authorization", f"token {self.token if token == 'default' else token}")
        if data is not None:
            req.add_header("Content-Type", "application/json")
        opener = urllib.request.build_opener(*(() if follow else (_Stay,)))
        try:
            with opener.open(req, timeout=60) as resp:
                return resp.status, dict(resp.headers), resp.read()
        except urllib.error.HTTPError as err:
            return err.code, dict(err.headers), err.read()

    @contextlib.contextmanager
    def kernel(self, kernel_id: str):
        """A client of one of this server's kernels, through its connection file (as the server talks to it)."""
        from jupyter_client import BlockingKernelClient

        client = BlockingKernelClient(connection_file=os.path.join(self.runtime_dir, f"kernel-{kernel_id}.json"))
        client.load_connection_file()
        client.start_channels(hb=False)  # the heartbeat is the server's business; requests wait for the kernel
        try:
            yield client
        finally:
            client.stop_channels()

    def json(self, method: str, path: str, body=None, **kwargs) -> tuple[int, dict]:
        status, _, payload = self.request(method, path, body, **kwargs)
        return status, json.loads(payload or b"{}")

    def __enter__(self) -> JupyterLabServer:
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc) -> None:
        self.stop()
