"""runtime.tls: contexts built from the configuration, and every bad setting refused naming its key.

Handshakes run between two in-memory TLS ends (ssl.MemoryBIO), so no socket is needed."""
from __future__ import annotations

import asyncio
import logging
import ssl
import threading

import pytest
import tornado.netutil
import tornado.web

from runtime import tls
from runtime.client import ClusterError, RestClient
from runtime.config import ConfigError, Configuration
from tests.helpers.certificates import make_certificates


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    return make_certificates(tmp_path_factory.mktemp("certs"))


@pytest.fixture(scope="module")
def other(tmp_path_factory):
    """A second CA and certificate: what a client trusting the wrong CA, or an outsider, holds."""
    return make_certificates(tmp_path_factory.mktemp("other"), name="outsider")


def handshake(server: ssl.SSLContext, client: ssl.SSLContext, hostname: str = "127.0.0.1"):
    """Run a TLS handshake between the two contexts in memory; the server side's SSLObject when it succeeds."""
    s_in, s_out, c_in, c_out = ssl.MemoryBIO(), ssl.MemoryBIO(), ssl.MemoryBIO(), ssl.MemoryBIO()
    s = server.wrap_bio(s_in, s_out, server_side=True)
    c = client.wrap_bio(c_in, c_out, server_hostname=hostname)
    done = {"s": False, "c": False}
    for _ in range(20):
        for name, end, out, peer_in in (("c", c, c_out, s_in), ("s", s, s_out, c_in)):
            if not done[name]:
                try:
                    end.do_handshake()
                    done[name] = True
                except ssl.SSLWantReadError:
                    pass
            peer_in.write(out.read())
        if all(done.values()):
            c.write(b"ping")  # TLS 1.3 sends the client certificate's verdict after the handshake
            s_in.write(c_out.read())
            assert s.read(4) == b"ping"
            return s
    raise AssertionError("handshake did not finish")


def rest_on(certs) -> dict:
    return {"security.ssl.rest.enabled": "true", "security.ssl.rest.cert": str(certs.cert),
            "security.ssl.rest.key": str(certs.key), "security.ssl.rest.trust-cert": str(certs.ca)}


def test_off_by_default_builds_nothing():
    c = Configuration()
    assert tls.server_context(c) is None and tls.rest_client_context(c) is None
    assert tls.internal_client_context(c) is None and tls.scheme(c) == "http"


def test_rest_server_verified_by_a_client_trusting_its_ca_and_refused_by_others(certs, other):
    c = Configuration(rest_on(certs))
    assert tls.scheme(c) == "https"
    server = tls.server_context(c)
    handshake(server, tls.client_context(str(certs.ca)))
    with pytest.raises(ssl.SSLCertVerificationError, match="certificate verify failed"):
        handshake(server, tls.client_context(str(other.ca)))
    with pytest.raises(ssl.SSLCertVerificationError, match="certificate verify failed"):
        handshake(server, tls.client_context(None))  # the system's CAs do not know a self-signed CA
    with pytest.raises(ssl.SSLCertVerificationError, match="mismatch|doesn't match"):
        handshake(server, tls.client_context(str(certs.ca)), hostname="10.1.2.3")


def test_internal_is_mutual(certs, other):
    c = Configuration({**certs.config(internal=True)})
    server = tls.server_context(c, tls.INTERNAL)
    assert server.verify_mode == ssl.CERT_REQUIRED
    peer = handshake(server, tls.internal_client_context(c))
    assert peer.getpeercert()["subject"]
    with pytest.raises(ssl.SSLError):
        handshake(server, tls.client_context(str(certs.ca)))  # no client certificate: refused
    outsider = tls.client_context(str(certs.ca), tls.TlsFiles("internal", str(other.cert), str(other.key), ""))
    with pytest.raises(ssl.SSLError):
        handshake(server, outsider)


def test_rest_port_asks_taskmanagers_for_the_internal_certificate_but_not_other_clients(certs):
    c = Configuration(certs.config(internal=True))
    server = tls.server_context(c)
    assert server.verify_mode == ssl.CERT_OPTIONAL
    assert handshake(server, tls.client_context(str(certs.ca))).getpeercert() is None
    assert handshake(server, tls.rest_client_context(c)).getpeercert()["subject"]


@pytest.mark.parametrize("values, named", [
    ({"security.ssl.rest.key": "K"}, "'security.ssl.rest.key' is set but 'security.ssl.rest.cert' is not"),
    ({"security.ssl.internal.cert": "C"}, "'security.ssl.internal.cert' is set but 'security.ssl.internal.key'"),
    ({"security.ssl.internal.enabled": "true"}, "'security.ssl.internal.enabled' needs 'security.ssl.rest.enabled'"),
    ({"security.ssl.rest.trust-cert": "/nonexistent/ca.pem"}, "'security.ssl.rest.trust-cert': no such file"),
])
def test_bad_settings_are_refused_naming_the_key(values, named):
    with pytest.raises(ConfigError, match=named.replace("(", r"\(")):
        tls.check(Configuration(values))


def test_missing_certificate_file_names_its_key(certs):
    with pytest.raises(ConfigError, match="'security.ssl.rest.cert': no such file '/gone/node.pem'"):
        tls.server_context(Configuration({**rest_on(certs), "security.ssl.rest.cert": "/gone/node.pem"}))


def test_rest_on_without_a_certificate_is_refused_by_a_server_but_fine_for_a_client(certs):
    c = Configuration({"security.ssl.rest.enabled": "true", "security.ssl.rest.trust-cert": str(certs.ca)})
    with pytest.raises(ConfigError, match="'security.ssl.rest.enabled' is true but 'security.ssl.rest.cert'"):
        tls.server_context(c)
    assert tls.rest_client_context(c).verify_mode == ssl.CERT_REQUIRED


def test_internal_needs_every_file(certs):
    values = {**certs.config(internal=True)}
    del values["security.ssl.internal.trust-cert"]
    with pytest.raises(ConfigError, match="'security.ssl.internal.trust-cert' is not set"):
        tls.check(Configuration(values))


def test_key_of_another_certificate_and_garbage_ca_are_named(certs, other, tmp_path):
    with pytest.raises(ConfigError, match="'security.ssl.rest.cert' and 'security.ssl.rest.key'"):
        tls.server_context(Configuration({**rest_on(certs), "security.ssl.rest.key": str(other.key)}))
    garbage = tmp_path / "ca.pem"
    garbage.write_text("not a certificate\n")
    with pytest.raises(ConfigError, match="'security.ssl.rest.trust-cert': cannot load"):
        tls.client_context(str(garbage))


def test_plain_beyond_loopback_warns_loudly(caplog, certs):
    with caplog.at_level(logging.WARNING, logger="runtime.tls"):
        tls.warn_if_plain(Configuration(), "127.0.0.1", "the JobManager")
        assert not caplog.records
        tls.warn_if_plain(Configuration(rest_on(certs)), "0.0.0.0", "the JobManager")
        assert not caplog.records
        tls.warn_if_plain(Configuration(), "0.0.0.0", "the JobManager")
    assert "WITHOUT TLS" in caplog.text and "security.ssl.rest.enabled" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="runtime.tls"):
        tls.warn_if_plain(Configuration(rest_on(certs)), "10.0.0.5", "a data port", tls.INTERNAL)
    assert "a data port binds 10.0.0.5 WITHOUT TLS" in caplog.text and "security.ssl.internal.enabled" in caplog.text


def test_clients_outside_the_cluster_read_the_keys_from_the_environment():
    env = {"FLINKBENCH_SECURITY_SSL_REST_TRUST_CERT": "/etc/ca.pem", "FLINKBENCH_SECURITY_SSL_REST_ENABLED": "true"}
    assert tls.trust_from_environment(env) == "/etc/ca.pem" and tls.rest_enabled_in_environment(env)
    assert tls.trust_from_environment({}) is None and not tls.rest_enabled_in_environment({})


@pytest.mark.parametrize("name", ["security.ssl.rest.keystore", "security.ssl.internal.truststore-password"])
def test_flinks_java_keystore_keys_are_refused_pointing_at_the_pem_keys(name):
    scope = name.split(".")[2]
    with pytest.raises(ConfigError, match=f"'{name}': Flinkbench reads PEM files, not Java keystores: set "
                                          f"security.ssl.{scope}.cert"):
        Configuration({name: "/etc/flink/store.jks"}).get(name)


@pytest.fixture
def https_server(certs):
    """tls.HttpServer with the REST certificate on a loop of its own thread; yields its port."""
    class Hello(tornado.web.RequestHandler):
        def get(self):
            self.finish({"hello": "over tls"})

    loop = asyncio.new_event_loop()
    ready: dict = {}

    async def serve():
        server = tls.HttpServer(tornado.web.Application([(r"/hello", Hello)]),
                                ssl_options=tls.server_context(Configuration(rest_on(certs))))
        sockets = tornado.netutil.bind_sockets(0, "127.0.0.1")
        server.add_sockets(sockets)
        ready["port"], ready["server"] = sockets[0].getsockname()[1], server

    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    asyncio.run_coroutine_threadsafe(serve(), loop).result(10)
    yield ready["port"]
    loop.call_soon_threadsafe(ready["server"].stop)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(10)


def test_a_plain_http_request_to_a_tls_port_gets_a_400_saying_so(https_server, certs):
    assert RestClient(f"https://127.0.0.1:{https_server}", token="t" * 43,
                      trust_cert=str(certs.ca)).get("/hello") == {"hello": "over tls"}
    with pytest.raises(ClusterError, match=r"serves HTTPS only \(security.ssl.rest.enabled\).*use an https:// URL"):
        RestClient(f"http://127.0.0.1:{https_server}", token="t" * 43).get("/hello")
