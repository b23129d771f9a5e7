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
process's loop at each scrape with the caller the token names, so it reads the roles' state without locks
and shows what that caller may see: a JobManager's endpoint also takes users' tokens (runtime.users), and
a user's scrape holds their own jobs only; a TaskManager's takes the cluster token alone.
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
from runtime.users import CLUSTER_ADMIN, Caller

log = logging.getLogger(__name__)

PORT_KEY = "metrics.reporter.prom.port"


def port_range(spec: str) -> range:
    """The ports to try, in order, for a value of the key (runtime.config has checked its form)."""
    first, _, last = spec.partition("-")
    return range(int(first), int(last or first) + 1)


Families = Callable[[Caller], Iterable[Metric]]
Identify = Callable[[str | None], Caller | None]


def cluster_token_only(token: str) -> Identify:
    """Who a token names where only the cluster token counts (a TaskManager knows no users): the admin."""
    return lambda presented: Caller(CLUSTER_ADMIN, True) if tokens_match(token, presented) else None


class _Families:
    """A prometheus_client collector over the process's metric families as one caller sees them."""

    def __init__(self, families: Families, caller: Caller):
        self.families, self.caller = families, caller

    def collect(self) -> Iterable[Metric]:
        return self.families(self.caller)


class _MetricsHandler(tornado.web.RequestHandler):
    def initialize(self, families: Families, identify: Identify) -> None:
        self.families, self.identify = families, identify

    def get(self) -> None:
        caller = self.identify(bearer(self.request.headers.get("Authorization")))
        if caller is None:
            self.set_status(401)
            self.finish("missing or invalid cluster token: send 'Authorization: Bearer <token>'\n")
            return
        registry = CollectorRegistry(auto_describe=False)
        registry.register(_Families(self.families, caller))
        self.set_header("Content-Type", CONTENT_TYPE_LATEST)
        self.finish(generate_latest(registry))


class PrometheusEndpoint:
    """``/metrics`` on the first free port of ``ports``; runs on the caller's asyncio loop."""

    def __init__(self, families: Families, identify: Identify, address: str, ports: range,
                 ssl_context: ssl.SSLContext | None = None):
        self.address, self.ports, self.port, self.ssl_context = address, ports, None, ssl_context
        self._app = tornado.web.Application([(r"/metrics", _MetricsHandler,
                                              {"families": families, "identify": identify})])
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


def start_endpoint(conf: Configuration, families: Families, identify: Identify,
                   address: str) -> PrometheusEndpoint | None:
    """The process's endpoint when ``metrics.reporter.prom.port`` is set, started; else None."""
    spec = conf.get(PORT_KEY)
    if not spec:
        return None
    tls.warn_if_plain(conf, address, "the Prometheus endpoint")
    endpoint = PrometheusEndpoint(families, identify, address, port_range(spec), tls.server_context(conf))
    endpoint.start()
    return endpoint
