"""What the tests' own servers (JupyterLab, JupyterHub) share: stopping their process group, and their log's end."""
from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path


def stop_group(popen: subprocess.Popen | None, grace_s: float) -> None:
    """SIGTERM the server's process group (it stops what it started), then SIGKILL the group if it lingers."""
    if popen is None or popen.poll() is not None:
        return
    os.killpg(popen.pid, signal.SIGTERM)
    try:
        popen.wait(grace_s)
    except subprocess.TimeoutExpired:
        os.killpg(popen.pid, signal.SIGKILL)
        popen.wait(10)


def log_tail(path: Path, lines: int = 40) -> str:
    try:
        return "".join(path.read_text(errors="replace").splitlines(True)[-lines:])
    except OSError:
        return ""
