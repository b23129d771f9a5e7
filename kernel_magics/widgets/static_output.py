"""Where a live view leaves its static copy (runtime.views.static_copy) in the notebook.

Under the widget, a view shows a second output with a display id: a one-line note while the job runs,
replaced by the copy when the job ends or the view stops (``update_display_data``), so the saved notebook
has a ``text/html`` output that needs no widget state and no kernel. JupyterLab updates an output by its
display id whichever cell is running; nbclient (``nbconvert --execute``) records only the messages of the
cell it is running, and ipykernel sends a thread's output with the parent of the cell running at the time.
A copy filled from a thread (a job that ended on its own) may so reach JupyterLab but not nbclient, and is
sent once more from the kernel's main thread when the next cell starts (:meth:`StaticOutput.resend`).

BokehJS goes into the first copy a kernel makes (about 1.3 MB); every copy draws its figures once BokehJS
is in the page.
"""
from __future__ import annotations

import threading
import uuid
from collections.abc import Callable

from IPython.display import display, update_display

PENDING = ("<div class='flinkbench-static-pending' style='color:#888;font-size:11px'>A static copy of this view, "
           "for the saved notebook, appears here when the job ends.</div>")

_bokehjs_lock = threading.Lock()
_bokehjs_sent = False


def _take_bokehjs() -> bool:
    """True for the first copy of this kernel: it carries BokehJS for the page."""
    global _bokehjs_sent
    with _bokehjs_lock:
        first, _bokehjs_sent = not _bokehjs_sent, True
        return first


class StaticOutput:
    """One view's static copy: shown as a placeholder, filled once, sent again from the main thread if needed."""

    def __init__(self):
        self.display_id = f"flinkbench-static-{uuid.uuid4().hex}"
        self.html: str | None = None
        self.summary = ""
        self._lock = threading.Lock()
        self._shown = False
        self._resend = False

    def show(self) -> None:
        """Display the placeholder (in the cell that shows the view)."""
        display({"text/html": PENDING, "text/plain": ""}, raw=True, display_id=self.display_id)
        self._shown = True

    @property
    def filled(self) -> bool:
        return self.html is not None

    def fill(self, make: Callable[[bool], str], summary: str) -> bool:
        """Make the copy with ``make(with_bokehjs)`` and send it, unless it was made already."""
        with self._lock:
            if self.html is not None or not self._shown:
                return False
            self.html, self.summary = make(_take_bokehjs()), summary
            self._resend = threading.current_thread() is not threading.main_thread()
        self._send()
        return True

    def resend(self) -> None:
        """On the main thread, in a running cell: send a copy made on another thread once more."""
        with self._lock:
            again, self._resend = self._resend, False
        if again:
            self._send()

    def _send(self) -> None:
        update_display({"text/html": self.html, "text/plain": self.summary}, raw=True, display_id=self.display_id)


def summary_line(name: str, state: str, rows: int) -> str:
    """The copy's text/plain form."""
    return f"{name}: {state}, {rows:,} rows collected (a static copy of the live view; its HTML form shows it)"
