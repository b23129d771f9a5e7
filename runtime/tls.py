"""TLS on every port, switched by Flink's keys and configured with PEM files.

Two scopes, as in Flink:

- ``security.ssl.rest.*``: the JobManager's REST port, which carries the REST API, the event stream
  (``/events``), the dashboard and the TaskManagers' control connection (``/control``), and the
  Prometheus endpoints of JobManagers and TaskManagers. Clients (RestClient, the CLI, TaskManagers,
  the notebook, the Jupyter server extension) verify the server's certificate and host name against
  ``security.ssl.rest.trust-cert`` (the system's CAs when it is empty).
- ``security.ssl.internal.*``: mutual TLS among the cluster's own processes. The data exchange
  between TaskManagers runs over it (each end presents the internal certificate and verifies the
  other's against ``security.ssl.internal.trust-cert``), and a TaskManager presents the same
  certificate on its control connection, which the JobManager then requires. Because the control
  connection rides the REST port, internal TLS needs REST TLS on as well; the combination without it
  is refused rather than leaving the control connection in the clear.

Every problem with these keys (a missing file, a key without its certificate, a key that does not
match its certificate) is a :class:`ConfigError` naming the key, raised when the process starts.
The token still authenticates every connection; TLS keeps it, and the data, off the wire.
"""
from __future__ import annotations

import contextlib
import functools
import json
import logging
import os
import socket
import ssl
from dataclasses import dataclass
from typing import Any

import tornado.httpserver
from tornado.ioloop import IOLoop

from runtime.config import ConfigError, Configuration, option

log = logging.getLogger(__name__)

REST, INTERNAL = "rest", "internal"
FILES = ("cert", "key", "trust-cert")


def key(scope: str, name: str) -> str:
    return f"security.ssl.{scope}.{name}"


TRUST_CERT_ENV = option(key(REST, "trust-cert")).env_name  # what clients outside a cluster process read
ENABLED_ENV = option(key(REST, "enabled")).env_name


@dataclass(frozen=True)
class TlsFiles:
    """One scope's PEM files, checked to exist; empty strings where a file is not set."""

    scope: str
    cert: str
    key: str
    trust_cert: str


def enabled(conf: Configuration, scope: str) -> bool:
    return bool(conf.get(key(scope, "enabled")))


def tls_files(conf: Configuration, scope: str) -> TlsFiles | None:
    """The scope's files when it is enabled (None when off); ConfigError naming the key at fault."""
    check(conf)
    if not enabled(conf, scope):
        return None
    return TlsFiles(scope, *(conf.get(key(scope, name)) for name in FILES))


def check(conf: Configuration) -> None:
    """Refuse TLS settings that cannot work, naming the key: called where a process starts."""
    for scope in (REST, INTERNAL):
        cert, private_key, _ = (conf.get(key(scope, name)) for name in FILES)
        if private_key and not cert:
            raise ConfigError(f"config key '{key(scope, 'key')}' is set but '{key(scope, 'cert')}' is not: "
                              "a private key needs the certificate it belongs to")
        if cert and not private_key:
            raise ConfigError(f"config key '{key(scope, 'cert')}' is set but '{key(scope, 'key')}' is not: "
                              "a certificate needs its private key")
        for name in FILES:
            path = conf.get(key(scope, name))
            if path and not os.path.isfile(path):
                raise ConfigError(f"config key '{key(scope, name)}': no such file {path!r}")
            if path and not os.access(path, os.R_OK):
                raise ConfigError(f"config key '{key(scope, name)}': cannot read {path!r}")
    if enabled(conf, INTERNAL):
        if not enabled(conf, REST):
            raise ConfigError(f"config key '{key(INTERNAL, 'enabled')}' needs '{key(REST, 'enabled')}' too: the "
                              "TaskManagers' control connection rides the REST port and would stay in the clear")
        for name in FILES:
            if not conf.get(key(INTERNAL, name)):
                raise ConfigError(f"config key '{key(INTERNAL, 'enabled')}' is true but '{key(INTERNAL, name)}' "
                                  "is not set: internal TLS is mutual, every process needs the certificate, its "
                                  "key and the CA certificate to check its peers")


def _load_chain(context: ssl.SSLContext, files: TlsFiles) -> None:
    try:
        context.load_cert_chain(files.cert, files.key)
    except ssl.SSLError as err:
        raise ConfigError(f"config keys '{key(files.scope, 'cert')}' and '{key(files.scope, 'key')}': cannot "
                          f"load {files.cert} with {files.key} ({err.reason or err}): both must be PEM and the key "
                          "must belong to the certificate") from None


def _load_trust(context: ssl.SSLContext, scope: str, trust_cert: str) -> None:
    try:
        context.load_verify_locations(cafile=trust_cert)
    except (ssl.SSLError, OSError) as err:
        raise ConfigError(f"config key '{key(scope, 'trust-cert')}': cannot load {trust_cert} as PEM CA "
                          f"certificates ({getattr(err, 'reason', None) or err})") from None


def server_context(conf: Configuration, scope: str = REST) -> ssl.SSLContext | None:
    """The context a server of ``scope`` listens with (None when the scope is off).

    REST: the certificate alone, and with internal TLS on, an optional client certificate checked
    against the internal CA (the JobManager's control endpoint requires it). Internal: mutual.
    """
    files = tls_files(conf, scope)
    if files is None:
        return None
    if not files.cert:
        raise ConfigError(f"config key '{key(scope, 'enabled')}' is true but '{key(scope, 'cert')}' and "
                          f"'{key(scope, 'key')}' are not set: a server needs a certificate and its key")
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    _load_chain(context, files)
    internal = tls_files(conf, INTERNAL)
    if internal is not None:
        _load_trust(context, INTERNAL, internal.trust_cert)
        context.verify_mode = ssl.CERT_REQUIRED if scope == INTERNAL else ssl.CERT_OPTIONAL
    return context


def client_context(trust_cert: str | None = None, client_cert: TlsFiles | None = None,
                   scope: str = REST) -> ssl.SSLContext:
    """A context that verifies the server's certificate and host name against ``trust_cert`` (PEM CA
    certificates; the system's CAs when empty), presenting ``client_cert`` when given.

    Contexts are shared (one per set of files as they are now: loading the system's CAs takes tens of
    milliseconds); a file changed on disk makes a new one."""
    files = [f for f in (trust_cert, client_cert and client_cert.cert, client_cert and client_cert.key) if f]
    return _client_context(trust_cert or None, client_cert, scope, tuple(_stamp(f) for f in files))


def _stamp(path: str) -> float:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return -1.0  # loading it names the key


@functools.lru_cache(maxsize=32)
def _client_context(trust_cert: str | None, client_cert: TlsFiles | None, scope: str,
                    stamps: tuple[float, ...]) -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    if trust_cert:
        _load_trust(context, scope, trust_cert)
    if client_cert is not None:
        _load_chain(context, client_cert)
    return context


def rest_client_context(conf: Configuration) -> ssl.SSLContext | None:
    """How a cluster process calls the REST port (a TaskManager's control connection): None when REST TLS
    is off; with internal TLS on it presents the internal certificate, which the control endpoint requires."""
    rest = tls_files(conf, REST)
    if rest is None:
        return None
    return client_context(rest.trust_cert, tls_files(conf, INTERNAL))


def internal_client_context(conf: Configuration) -> ssl.SSLContext | None:
    """How a TaskManager connects to another's data port: mutual, against the internal CA."""
    internal = tls_files(conf, INTERNAL)
    if internal is None:
        return None
    return client_context(internal.trust_cert, internal, INTERNAL)


def scheme(conf: Configuration) -> str:
    return "https" if enabled(conf, REST) else "http"


def warn_if_plain(conf: Configuration, address: str, what: str, scope: str = REST) -> None:
    """A loud warning when a port beyond loopback serves in the clear: the token would cross the network."""
    from runtime.security import is_loopback

    if enabled(conf, scope) or is_loopback(address):
        return
    bar = "!" * 100
    log.warning("\n%s\n%s binds %s WITHOUT TLS: the cluster token and every job's code and data cross the network "
                "in the clear.\nSet %s: true (and %s, %s, %s) to encrypt it; see the README's TLS section.\n%s",
                bar, what, address, key(scope, "enabled"), key(scope, "cert"), key(scope, "key"),
                key(scope, "trust-cert"), bar)


def trust_from_environment(environ=None) -> str | None:
    """``security.ssl.rest.trust-cert`` for clients outside a cluster process (the CLI, a notebook):
    ``FLINKBENCH_SECURITY_SSL_REST_TRUST_CERT``, as a JobManager would read the key."""
    return (os.environ if environ is None else environ).get(TRUST_CERT_ENV) or None


def rest_enabled_in_environment(environ=None) -> bool:
    """Whether ``FLINKBENCH_SECURITY_SSL_REST_ENABLED`` asks for https, as Flink's CLI reads it from its config."""
    value = (os.environ if environ is None else environ).get(ENABLED_ENV, "")
    return value.strip().lower() in ("true", "yes", "1", "on")


PLAIN_ON_TLS = ("this port serves HTTPS only (security.ssl.rest.enabled): a plain HTTP request was sent to it; "
                "use an https:// URL and trust the cluster's CA certificate (security.ssl.rest.trust-cert)")
_HTTP_FIRST_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ")  # a request line starts with a method; TLS with 0x16


def plain_http_refusal() -> bytes:
    body = json.dumps({"errors": [PLAIN_ON_TLS]}).encode()
    return (b"HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nConnection: close\r\n"
            b"Content-Length: %d\r\n\r\n" % len(body)) + body


class HttpServer(tornado.httpserver.HTTPServer):
    """Tornado's HTTPServer that, serving TLS, answers a plain HTTP request with a 400 naming the problem
    (as nginx does) instead of a handshake failure the client sees as a dropped connection."""

    def _handle_connection(self, connection: socket.socket, address: Any) -> None:
        if self.ssl_options is None:
            super()._handle_connection(connection, address)
            return
        loop, fd = IOLoop.current(), connection.fileno()

        def readable(_fd: Any, _events: int) -> None:
            loop.remove_handler(fd)
            try:
                first = connection.recv(1, socket.MSG_PEEK)
            except OSError:
                connection.close()
                return
            if first and first[0] in _HTTP_FIRST_BYTES:
                _refuse_plain(connection)
            elif first:
                super(HttpServer, self)._handle_connection(connection, address)
            else:
                connection.close()  # closed before a byte was sent (a port probe)

        loop.add_handler(fd, readable, IOLoop.READ)


def _refuse_plain(connection: socket.socket) -> None:
    with contextlib.suppress(OSError):
        connection.recv(65536)  # the request as it arrived: unread bytes would turn the close into a reset
        connection.sendall(plain_http_refusal())
        connection.shutdown(socket.SHUT_WR)
    connection.close()
