"""Running notebooks headless with nbclient against real kernels, and reading their outputs."""
from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import nbformat
from jupyter_client.blocking import BlockingKernelClient
from jupyter_client.manager import KernelManager
from nbclient import NotebookClient
from traitlets.config import Config

REPO = Path(__file__).resolve().parents[2]
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def code_notebook(*sources: str) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for src in sources]
    return nb


def with_parameters(nb: nbformat.NotebookNode, **values) -> nbformat.NotebookNode:
    """Replace the cell tagged 'parameters' with assignments of ``values`` (papermill's convention)."""
    for cell in nb.cells:
        if "parameters" in cell.get("metadata", {}).get("tags", []):
            cell.source = "\n".join(f"{name} = {value!r}" for name, value in values.items())
            return nb
    raise ValueError("the notebook has no cell tagged 'parameters'")


CLUSTER_VARIABLES = ("FLINKBENCH_JOBMANAGER_URL", "FLINKBENCH_TOKEN_FILE", "FLINKBENCH_TOKEN")


@contextmanager
def kernel_config() -> Iterator[Config]:
    """A kernel manager's config for Unix sockets in a directory of their own.

    Over TCP jupyter_client picks five free ports and the kernel binds them later, so a connection made by anything
    running in parallel can take one in between ("Address already in use", the kernel dies). Over IPC it numbers
    socket files ``<ip>-1`` .. ``-5`` in the working directory unless told a path, and two kernels started at once
    can pick the same numbers; a fresh directory per kernel rules that out."""
    with tempfile.TemporaryDirectory(prefix="kernel-") as sockets:
        yield Config({"KernelManager": {"transport": "ipc", "ip": os.path.join(sockets, "k")}})


@contextmanager
def started_kernel(env: dict[str, str]) -> Iterator[tuple[KernelManager, BlockingKernelClient]]:
    """A python3 kernel in the repository root, ready, with its client's channels open; shut down on exit."""
    with kernel_config() as config:
        km = KernelManager(kernel_name="python3", config=config)
        km.start_kernel(cwd=str(REPO), env=env)
        kc = km.client()
        kc.start_channels()
        try:
            kc.wait_for_ready(timeout=60)
            yield km, kc
        finally:
            kc.stop_channels()
            km.shutdown_kernel(now=True)


def execute(nb: nbformat.NotebookNode, timeout: float = 300, allow_errors: bool = False,
            save_to: Path | None = None, env: dict[str, str] | None = None, cwd: Path = REPO,
            unset: tuple[str, ...] = ()) -> nbformat.NotebookNode:
    """Execute in a fresh kernel started in ``cwd`` (the repository root; a notebook's folder, as JupyterLab
    starts its kernel); optionally keep the executed copy.

    The kernel sees no cluster from this process's environment, only the variables in ``env``, and none of the
    variables named in ``unset``."""
    base = {k: v for k, v in os.environ.items() if k not in CLUSTER_VARIABLES + unset}
    env = dict(base, SPARK_LOCAL_IP="127.0.0.1", PYTHONPATH=str(REPO), **(env or {}))
    try:
        with kernel_config() as config:
            NotebookClient(nb, timeout=timeout, kernel_name="python3", allow_errors=allow_errors,
                           resources={"metadata": {"path": str(cwd)}}, config=config).execute(env=env)
    finally:
        if save_to is not None:
            save_to.parent.mkdir(parents=True, exist_ok=True)
            nbformat.write(nb, str(save_to))
    return nb


def text_of(cell) -> str:
    """Everything a cell printed or raised, as plain text without colour codes."""
    parts = []
    for out in cell.get("outputs", []):
        if out.output_type == "stream":
            parts.append(out.text)
        elif out.output_type == "error":
            parts.append("\n".join(out.traceback))
        elif "text/plain" in out.get("data", {}):
            parts.append(out.data["text/plain"])
    return ANSI.sub("", "\n".join(parts))


def error_of(cell):
    errors = [o for o in cell.get("outputs", []) if o.output_type == "error"]
    return errors[0] if errors else None


def json_lines(cell, prefix: str = "CHECK ") -> dict:
    """The JSON objects a cell printed on lines starting with ``prefix``, merged."""
    found = {}
    for line in text_of(cell).splitlines():
        if line.startswith(prefix):
            found.update(json.loads(line[len(prefix):]))
    return found


def widget_views(cell) -> list[dict]:
    return [o.data["application/vnd.jupyter.widget-view+json"] for o in cell.get("outputs", [])
            if o.output_type in ("display_data", "execute_result")
            and "application/vnd.jupyter.widget-view+json" in o.get("data", {})]
