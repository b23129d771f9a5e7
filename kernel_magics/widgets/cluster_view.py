"""ClusterView: the cluster-wide live views (``%flink dashboard``) as a notebook widget."""
from __future__ import annotations

from runtime.views.figures import ClusterViews

from kernel_magics.widgets.bokehjs import LiveBokeh, ensure_loaded


class ClusterView:
    def __init__(self, session, title: str = "Flinkbench cluster"):
        self.session = session
        self.views = ClusterViews(None, title=title)
        self.views.refresh(session.model, force=True)
        self.views.on_tab_shown(session.updater.poke)
        self.bokeh = LiveBokeh(self.views.layout)
        self.widget = self.bokeh.widget
        self.closed = False

    def _ipython_display_(self) -> None:
        from IPython.display import display

        ensure_loaded()
        display(self.widget)

    def refresh(self) -> bool:
        """Runs on the updater thread; returns False once closed (replaced by a newer dashboard)."""
        if not self.closed:
            self.bokeh.resync_if_needed()
            self.views.refresh(self.session.model)
        return not self.closed
