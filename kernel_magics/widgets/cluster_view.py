"""ClusterView: the cluster-wide live views (``%flink dashboard``) as a notebook widget."""
from __future__ import annotations

from jupyter_bokeh import BokehModel

from runtime.views.figures import ClusterViews


class ClusterView:
    def __init__(self, session, title: str = "Flinkbench cluster"):
        self.session = session
        self.views = ClusterViews(None, title=title)
        self.views.refresh(session.model, force=True)
        self.widget = BokehModel(self.views.layout)
        self.closed = False

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)

    def refresh(self) -> bool:
        """Runs on the updater thread; returns False once closed (replaced by a newer dashboard)."""
        if not self.closed:
            self.views.refresh(self.session.model)
        return not self.closed
