"""The Jupyter server extension behind the Flinkbench side panel.

Everything lives under one URL prefix, ``<base_url>/flinkbench/``:

- ``api/<path>``      forwards REST calls to the configured JobManager's ``/<path>``;
- ``events``          forwards the JobManager's event stream (WebSocket);
- ``graph/<job id>``  the job graph laid out for the panel (runtime.views.graph, as the notebook draws it);
- ``dashboard``       opens the JobManager's web dashboard in the browser, logged in by a one-time link;
- ``connection``      which JobManager the panel (and kernels that submit from it) talk to;
- ``local-cluster``   start and stop a LocalCluster owned by this Jupyter server;
- ``kernel/<id>/cluster``  the cluster a notebook's kernel follows (running, stopped or none), and
  ``kernel/<id>/api|events|graph|dashboard``, the routes above for that cluster: the panel shows the
  cluster of the notebook in focus (kernel_magics.server.kernels).

The cluster token is read from its token file here, on the server, and added to every forwarded
request: the browser never sees it. Every route requires Jupyter's own authentication.
"""
from __future__ import annotations

from kernel_magics.server.app import FlinkbenchServerExtension

URL_PREFIX = FlinkbenchServerExtension.name


def _jupyter_server_extension_points() -> list[dict]:
    return [{"module": "kernel_magics.server", "app": FlinkbenchServerExtension}]


__all__ = ["FlinkbenchServerExtension", "URL_PREFIX"]
