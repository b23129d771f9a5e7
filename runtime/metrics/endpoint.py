"""The Prometheus endpoint of a JobManager or TaskManager: ``metrics.reporter.prom.port`` (Flink's key).

When the key is set, the process serves ``GET /metrics`` in Prometheus' text format on a port of its
own, bound to the process's address (``rest.address`` on a JobManager, ``taskmanager.host`` on a
TaskManager). The key takes one port or a range (``9250-9260``): several processes on one host
share a range and each takes the first free port in it, as in Flink. Like every other port of a
cluster it asks for the cluster token (``Authorization: Bearer``; in Prometheus' scrape config,
``authorization: {credentials_file: <token file>}``); a request without it gets 401. With
``security.ssl.rest.enabled`` it serves https with the REST certificate (runtime.tls), so the token
never crosses in the clear (scrape config: ``scheme: https``, ``tls_config: {ca_file: ...}``).

Metric families come from a function the process hands in (runtime.metrics.families), called on the
process's loop at each scrape, so it reads the roles' state without locks.
"""
from __future__ import annotations

import logging
import ssl
from collections.abc import Callable, Iterable

import tornado.httpserver
import tornado.netutil
import tornado.web
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.core import Metric

from runtime import tls
from runtime.config import Configuration
from runtime.errors import ClusterError
from runtime.security import bearer, tokens_match

log = logging.getLogger(__name__)

PORT_KEY = "metrics.reporter.prom.port"


def port_range(spec: str) -> range:
    """The ports to try, in order, for a value of the key (runtime.config has checked its form)."""
    first, _, last = spec.partition("-")
    return range(int(first), int(last or first) + 1)


class _Families:
    """A prometheus_client collector over the process's function of metric families."""

    def __init__(self, families: Callable[[], Iterable[Metric]]):
        self.families = families

    def collect(self) -> Iterable[Metric]:
        return self.families()


class _MetricsHandler(tornado.web.RequestHandler):
    def initialize(self, registry: CollectorRegistry, token: str) -> None:
        self.registry, self.token = registry, token

    def get(self) -> None:
        if not tokens_match(self.token, bearer(self.request.headers.get("Authorization"))):
            self.set_status(401)
            self.finish("missing or invalid cluster token: send 'Authorization: Bearer <token>'\n")
            return
        self.set_header("Content-Type", CONTENT_TYPE_LATEST)
        self.finish(generate_latest(self.registry))


class PrometheusEndpoint:
    """``/metrics`` on the first free port of ``ports``; runs on the caller's asyncio loop."""

    def __init__(self, families: Callable[[], Iterable[Metric]], token: str, address: str, ports: range,
                 ssl_context: ssl.SSLContext | None = None):
        self.address, self.ports, self.port, self.ssl_context = address, ports, None, ssl_context
        registry = CollectorRegistry(auto_describe=False)
        registry.register(_Families(families))
        self._app = tornado.web.Application([(r"/metrics", _MetricsHandler, {"registry": registry, "token": token})])
        self._server: tornado.httpserver.HTTPServer | None = None

    @property
    def url(self) -> str:
        return f"{'https' if self.ssl_context else 'http'}://{self.address}:{self.port}/metrics"

    def start(self) -> int:
        """Bind the first free port; ClusterError when every one is taken."""
        for port in self.ports:
            try:
                sockets = tornado.netutil.bind_sockets(port, self.address)
            except OSError:
                continue
            self._server = tls.HttpServer(self._app, ssl_options=self.ssl_context)
            self._server.add_sockets(sockets)
            self.port = port
            log.info("Prometheus metrics at %s", self.url)
            return port
        raise ClusterError(f"{PORT_KEY}: no free port among {self.ports.start}-{self.ports.stop - 1} on {self.address}")

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop()


def start_endpoint(conf: Configuration, families: Callable[[], Iterable[Metric]], token: str,
                   address: str) -> PrometheusEndpoint | None:
    """The process's endpoint when ``metrics.reporter.prom.port`` is set, started; else None."""
    spec = conf.get(PORT_KEY)
    if not spec:
        return None
    tls.warn_if_plain(conf, address, "the Prometheus endpoint")
    endpoint = PrometheusEndpoint(families, token, address, port_range(spec), tls.server_context(conf))
    endpoint.start()
    return endpoint
