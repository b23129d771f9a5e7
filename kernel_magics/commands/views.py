"""``%flink dashboard``: the cluster-wide live views, without a job."""
from __future__ import annotations

from IPython.core.magic_arguments import magic_arguments, parse_argstring

from kernel_magics.commands.subcommand import subcommand


@subcommand("dashboard")
@magic_arguments(name="flink dashboard")
def dashboard(session, line: str):
    """Live slot allocation, task progress, checkpoints and failover state for the whole cluster."""
    from kernel_magics.widgets.cluster_view import ClusterView

    parse_argstring(dashboard, line)
    session.require_client()
    view = ClusterView(session)
    session.add_dashboard(view)
    print(f"the JobManager's web dashboard shows them too: {session.dashboard_link()}")
    return view
