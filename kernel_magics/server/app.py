"""The server extension application: configuration, shared state and routes."""
from __future__ import annotations

import asyncio
import os

from jupyter_server.extension.application import ExtensionApp
from tornado.ioloop import IOLoop
from traitlets import Float, Unicode

from kernel_magics.kernel_registration import JUPYTER_URL_ENV
from kernel_magics.server.kernels import KernelClusters
from kernel_magics.server.local_cluster import LocalClusterManager
from kernel_magics.server.target import Connection, JobManagerTarget, TargetError


class FlinkbenchServerExtension(ExtensionApp):
    name = "flinkbench"
    description = "Forwards the Flinkbench side panel to a JobManager, adding the cluster token server-side."
    load_other_extensions = True

    jobmanager_url = Unicode("", config=True, help="JobManager REST URL used until the panel picks one; "
                                                   "defaults to $FLINKBENCH_JOBMANAGER_URL.")
    token_file = Unicode("", config=True, help="File holding that JobManager's token; defaults to "
                                               "$FLINKBENCH_TOKEN_FILE, then the CLI's default location.")
    trust_cert = Unicode("", config=True, help="PEM CA certificate(s) an https JobManager is verified against; "
                                               "defaults to $FLINKBENCH_SECURITY_SSL_REST_TRUST_CERT, else the "
                                               "system's CAs.")
    request_timeout = Float(30.0, config=True, help="Seconds to wait for the JobManager on a forwarded call.")
    local_cluster_dir = Unicode("", config=True, help="Parent directory for the working directories of local "
                                                      "clusters started from the panel; empty means the temp dir.")

    def initialize_settings(self) -> None:
        self.connection = Connection(self._default_target())
        self.local_cluster = LocalClusterManager(self.local_cluster_dir or None)
        # Kernels started from now on say which cluster they follow (kernel_magics.kernel_registration).
        self.kernels = KernelClusters(self.serverapp.runtime_dir)
        self.kernels.export()
        IOLoop.current().add_callback(self._export_url)
        self.settings.update({"flinkbench_connection": self.connection,
                              "flinkbench_local_cluster": self.local_cluster,
                              "flinkbench_kernels": self.kernels,
                              "flinkbench_request_timeout": self.request_timeout})

    def _export_url(self) -> None:
        """This server's address, for the dashboard links kernels print: known once it listens, before any
        kernel starts."""
        os.environ[JUPYTER_URL_ENV] = self.serverapp.connection_url

    def _default_target(self) -> JobManagerTarget | None:
        url = self.jobmanager_url or os.environ.get("FLINKBENCH_JOBMANAGER_URL", "")
        if not url:
            return None
        source = "server config" if self.jobmanager_url else "environment"
        try:
            return JobManagerTarget.make(url, self.token_file or os.environ.get("FLINKBENCH_TOKEN_FILE"), source,
                                         self.trust_cert or None)
        except TargetError as err:
            self.log.warning("Flinkbench: ignoring the default JobManager: %s", err)
            return None

    def initialize_handlers(self) -> None:
        from kernel_magics.server.routes import routes

        self.handlers.extend(routes(self.name))

    async def stop_extension(self) -> None:
        await asyncio.get_running_loop().run_in_executor(None, self.local_cluster.shutdown)
        self.kernels.close()
