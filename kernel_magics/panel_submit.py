"""What the side panel's "Submit cell as job" runs in the kernel before it sends the cell.

The panel (extension/src/submit.ts) sends the active cell as a ``%%flink`` cell, so it behaves exactly as
one the user ran. First, silently, it calls :func:`prepare` in the notebook's kernel::

    __import__("kernel_magics.panel_submit").panel_submit.prepare(url, token_file)

which leaves nothing behind in the user's namespace. ``prepare`` loads the magics when the notebook has not
(``%load_ext kernel_magics``) and, when the panel is connected to a JobManager, points the kernel's Flink
session at the same one (``%flink connect``), so the job shows up in the panel. A session already there is
left alone, its running jobs and views with it; one connected elsewhere is moved. What fails reaches the
cell as its error: a kernel without Flinkbench's Jupyter extra says what to install, a JobManager that
cannot be reached says so as ``%flink connect`` does.
"""
from __future__ import annotations

import shlex
from typing import Any


def prepare(url: str | None, token_file: str | None, shell: Any = None) -> None:
    """Make ``shell`` (the running kernel's by default) ready for a ``%%flink`` cell from the panel, whose
    connection is ``url`` and ``token_file`` (None: the panel is not connected; the kernel's own stays)."""
    from IPython import get_ipython
    from IPython.core.error import UsageError

    ip = shell if shell is not None else get_ipython()
    if ip is None:
        raise UsageError("Submit cell as job runs in an IPython kernel; none is running here")
    if "kernel_magics" not in ip.extension_manager.loaded:
        ip.extension_manager.load_extension("kernel_magics")
    if not url:
        return
    from kernel_magics.session import session_for

    if (session_for(ip).url or "").rstrip("/") == url.rstrip("/"):
        return
    line = "connect " + shlex.quote(url) + (" --token-file " + shlex.quote(token_file) if token_file else "")
    ip.run_line_magic("flink", line)
