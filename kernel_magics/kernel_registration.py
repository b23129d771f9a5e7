"""What this kernel tells the Jupyter server that started it, so the side panel follows the notebook.

The Flinkbench server extension gives the kernels it starts two variables: a folder for kernel records
(``FLINKBENCH_KERNEL_RECORDS``) and its own URL (``FLINKBENCH_JUPYTER_URL``). A kernel keeps one small
JSON record there, named after its connection file (``kernel-<kernel id>.json``, the name the server
knows it by): the JobManager it follows, that cluster's token file (never the token), whether this
kernel started the cluster, and the kernel's pid, so that the server can tell a record whose kernel has
gone (a restart) from a live one. The server extension reads the record of the notebook in focus.

A kernel that no such server started (plain IPython, nbclient) has neither variable: nothing is written.
Writing never raises: a record that cannot be written leaves the panel on its own choice, not the cell
failing.
"""
from __future__ import annotations

import logging
import os
import re

from runtime.fileio import write_json_atomically

RECORDS_ENV = "FLINKBENCH_KERNEL_RECORDS"
JUPYTER_URL_ENV = "FLINKBENCH_JUPYTER_URL"
KERNEL_FILE = re.compile(r"kernel-([0-9A-Za-z-]+)\.json")

log = logging.getLogger(__name__)


def connection_file() -> str | None:
    """This kernel's connection file, or None outside a kernel."""
    try:
        from ipykernel.connect import get_connection_file

        return get_connection_file()
    except (ImportError, RuntimeError, OSError):
        return None


def kernel_id(connection: str | None = None) -> str | None:
    """The id the Jupyter server knows this kernel by (its connection file is ``kernel-<id>.json``)."""
    match = KERNEL_FILE.fullmatch(os.path.basename(connection or connection_file() or ""))
    return match.group(1) if match else None


def server_dashboard_link() -> str | None:
    """The Jupyter server's address that opens this kernel's cluster dashboard, logged in: it asks the
    JobManager for a fresh one-time link at each click, so it never expires while the cluster runs.
    None when no Flinkbench server extension started this kernel."""
    base, kernel = os.environ.get(JUPYTER_URL_ENV), kernel_id()
    if not base or not kernel:
        return None
    return f"{base.rstrip('/')}/flinkbench/kernel/{kernel}/dashboard"


class KernelRecord:
    """This kernel's record in the server's folder; every method is a no-op without one."""

    def __init__(self, path: str | None):
        self.path = path

    @classmethod
    def for_this_kernel(cls) -> KernelRecord:
        folder, connection = os.environ.get(RECORDS_ENV), connection_file()
        return cls(os.path.join(folder, os.path.basename(connection)) if folder and connection else None)

    def connected(self, url: str, token_file: str | None, trust_cert: str | None, owned: bool) -> None:
        """The kernel follows the cluster at ``url``; ``owned``: it started it (``%flink local``)."""
        self._write({"state": "running", "url": url, "token_file": token_file, "trust_cert": trust_cert,
                     "owned": owned})

    def stopped(self, url: str, reason: str) -> None:
        """The cluster this kernel started has stopped (or is stopping now), and why."""
        self._write({"state": "stopped", "url": url, "reason": reason, "owned": True})

    def clear(self) -> None:
        """The kernel follows no cluster."""
        if self.path is None:
            return
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass
        except OSError as err:
            log.warning("cannot remove this kernel's Flinkbench record %s: %s", self.path, err)

    def _write(self, record: dict) -> None:
        if self.path is None:
            return
        try:
            write_json_atomically(self.path, {**record, "pid": os.getpid()})
        except OSError as err:  # e.g. the server stopped and took its folder with it
            log.warning("cannot write this kernel's Flinkbench record %s: %s", self.path, err)
