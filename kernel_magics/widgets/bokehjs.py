"""Bokeh layouts as notebook widgets that stay in step with the page.

BokehJS must be in the page before jupyter_bokeh's widgets can render; it is loaded once per kernel,
inline rather than from Bokeh's CDN, so views also render on machines without internet access.

A jupyter_bokeh view builds its document from the widget's ``render_bundle`` when it renders and
then applies change messages; changes sent before a view exists are dropped by the page. So
:class:`LiveBokeh` counts the page's views (ipywidgets' ``_view_count``) and, when a new one
appears, sends the whole current document again: a view shown late still ends up current.

jupyter_bokeh sends each document change as three comm messages (header, metadata, content) and a view
reassembles them with a Bokeh Receiver that never resynchronises: a view that starts listening between
two of them reads every later change shifted by one message and stays frozen at what it first drew. So
no change is sent before the page reports a view; the first view then gets the whole document and the
changes after it, each from its start.
"""
from __future__ import annotations

import threading

from jupyter_bokeh import BokehModel

_lock = threading.Lock()
_loaded = False


def ensure_loaded() -> None:
    """Put BokehJS into the page through the current cell's output, the first time a view is shown."""
    global _loaded
    with _lock:
        if _loaded:
            return
        from bokeh.io import output_notebook
        from bokeh.resources import INLINE

        output_notebook(INLINE, hide_banner=True)
        _loaded = True


class QuietBokehModel(BokehModel):
    """A BokehModel that keeps document changes to itself until the page shows a view of it."""

    def _document_patched(self, event) -> None:
        if not self._view_count:
            return  # no view listens yet; the first one is sent the whole document (LiveBokeh)
        super()._document_patched(event)


class LiveBokeh:
    """A BokehModel widget for a layout that the view updater thread keeps changing."""

    def __init__(self, layout):
        self.layout = layout
        self.widget = QuietBokehModel(layout, _view_count=0)
        self._synced_views = 0
        self._views = 0
        self.widget.observe(self._views_changed, names="_view_count")

    def _views_changed(self, change) -> None:
        """Runs on the kernel's main thread: only note it; the updater thread resends the document."""
        self._views = change["new"] or 0

    def resync_if_needed(self) -> None:
        """On the updater thread: if the page gained a view since the last call, send it everything."""
        views = self._views
        if views > self._synced_views:
            self.widget.update_from_model(self.layout)
        self._synced_views = views
