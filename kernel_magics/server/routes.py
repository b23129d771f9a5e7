"""Every route of the server extension, under ``<base_url>/flinkbench/``: the server's own JobManager's, and
the same under ``kernel/<kernel id>/`` for the cluster a notebook's kernel follows (kernel_magics.server.kernels)."""
from __future__ import annotations

from kernel_magics.server.dashboard import DashboardHandler
from kernel_magics.server.events import EventsProxySocket
from kernel_magics.server.graph import JobGraphHandler
from kernel_magics.server.handlers import (KERNEL, ConnectionHandler, KernelClusterHandler, LocalClusterHandler,
                                           ProxyHandler)

SCOPED = ((r"graph/(?P<job>[^/]+)", JobGraphHandler), (r"events", EventsProxySocket),
          (r"dashboard", DashboardHandler), (r"api/(?P<path>.*)", ProxyHandler))


def routes(prefix: str) -> list:
    """Every route of the extension; tests walk this list to check each one requires authentication."""
    return [(rf"/{prefix}/connection", ConnectionHandler),
            (rf"/{prefix}/local-cluster", LocalClusterHandler),
            (rf"/{prefix}/{KERNEL}cluster", KernelClusterHandler),
            *[(rf"/{prefix}/{scope}{tail}", handler) for tail, handler in SCOPED for scope in ("", KERNEL)]]
