"""Bad input gets a clear error naming the problem, and no process dies of it."""
from __future__ import annotations

import base64
import json
import subprocess
import sys
import urllib.error
import urllib.request

import pytest

from runtime.client import JobFailed
from runtime.jobmanager.rest import all_routes
from tests.integration.test_cluster_core import seq_source


def call(cluster, method, path, data: bytes | None = None, token: str | None = "cluster"):
    """One raw HTTP call; returns (status, parsed JSON body)."""
    req = urllib.request.Request(cluster.url + path, data=data, method=method)
    if token is not None:
        req.add_header("Authorization", f"Bearer {cluster.token if token == 'cluster' else token}")
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.status, json.loads(resp.read() or b"{}")
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read() or b"{}")


def graph_of(env) -> dict:
    from runtime.codec import to_plain
    return to_plain(env.job_graph("probe"))


@pytest.fixture
def still_serving(cluster):
    """After the test, the JobManager and both TaskManagers still answer."""
    yield
    assert cluster.client.overview()["taskmanagers"] == 2
    assert cluster.jobmanager.alive() and all(tm.alive() for tm in cluster.taskmanagers)


@pytest.mark.parametrize("body, needle", [
    (b"{not json", "not valid JSON"),
    (b"[1, 2]", "must be a JSON object"),
    (b"{}", "the field 'job_graph'"),
    (b'{"job_graph": {"name": 3}}', "malformed"),
    (b'{"job_graph": {"name": "x", "operators": [], "edges": []}}', "invalid job graph"),
])
def test_malformed_submissions_get_400_with_the_reason(cluster, still_serving, body, needle):
    status, reply = call(cluster, "POST", "/jobs", body)
    assert status == 400 and needle in reply["errors"][0], reply


def test_unknown_ids_get_404(cluster, still_serving):
    for path in ("/jobs/feedc0de", "/jobs/feedc0de/exceptions", "/jobs/feedc0de/results", "/taskmanagers/tm-nope"):
        status, reply = call(cluster, "GET", path)
        assert status == 404 and "not found" in reply["errors"][0].lower(), (path, reply)
    status, reply = call(cluster, "PATCH", "/jobs/feedc0de?mode=cancel")
    assert status == 404


def test_bad_query_parameters_are_named(cluster, still_serving):
    env = cluster.environment()
    seq_source(env, rows=10).collect()
    job = env.execute_async("tiny")
    job.wait(120)
    status, reply = call(cluster, "GET", f"/jobs/{job.job_id}/results?offset=minus")
    assert status == 400 and "'offset' must be an integer" in reply["errors"][0]


def test_unknown_and_ill_typed_job_config_keys_are_refused(cluster, still_serving):
    env = cluster.environment()
    seq_source(env, rows=10).collect()
    graph = graph_of(env)
    for config, needle in (({"parallelism.defualt": "2"}, "parallelism.defualt"),
                           ({"parallelism.default": "many"}, "parallelism.default")):
        graph["config"] = config
        status, reply = call(cluster, "POST", "/jobs", json.dumps({"job_graph": graph}).encode())
        assert status == 400 and needle in reply["errors"][0], reply


def test_a_function_that_raises_fails_the_job_with_its_traceback(cluster, still_serving):
    env = cluster.environment()

    def explode(frame):
        raise ValueError("amount out of range in user code")

    seq_source(env, rows=100).map(explode).collect()
    job = env.execute_async("raises")
    with pytest.raises(JobFailed) as failure:
        job.wait(120)
    assert "ValueError: amount out of range in user code" in failure.value.cause
    assert "explode" in failure.value.cause, "the traceback names the user's function"
    history = job.exceptions()["exceptionHistory"]["entries"]
    assert history and history[0]["exceptionName"] == "ValueError"


def test_a_pickle_that_cannot_load_fails_the_job_readably(cluster, still_serving):
    env = cluster.environment()
    seq_source(env, rows=10).map(lambda f: f).collect()
    graph = graph_of(env)
    mapper = next(op for op in graph["operators"] if op.get("udf"))
    mapper["udf"] = base64.b64encode(b"\x80\x05not a pickle").decode()
    job = cluster.client.submit(graph)
    with pytest.raises(JobFailed) as failure:
        job.wait(120)
    assert "cannot load" in failure.value.cause.lower() and mapper["name"] in failure.value.cause


def test_oversized_body_is_refused_with_413_before_it_is_read(cluster, still_serving):
    import socket
    from urllib.parse import urlparse

    url = urlparse(cluster.url)
    limit = 64 * 1024 * 1024
    with socket.create_connection((url.hostname, url.port), timeout=30) as sock:
        sock.sendall((f"POST /jobs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {cluster.token}\r\n"
                      f"Content-Length: {limit + 1}\r\n\r\n").encode())
        reply = sock.recv(4096).decode(errors="replace")
    head, _, body = reply.partition("\r\n\r\n")
    assert head.split(" ")[1] == "413", reply
    assert "rest.server.max-content-length" in json.loads(body)["errors"][0]


def _example_path(path: str) -> str:
    """A concrete path for a route: each ``:param`` becomes a sample value."""
    import re
    return re.sub(r":(\w+)", lambda m: {"taskmanagerid": "tm-nope"}.get(m.group(1), "feedc0de"), path)


def test_every_route_but_healthz_requires_the_token(cluster, still_serving):
    paths = [_example_path(r.path) for r in all_routes()] + ["/control", "/dashboard", "/no/such/path"]
    assert "/jobs" in paths and "/events" in paths
    for path in paths:
        for prefix in ("", "/v1"):
            for token in (None, "x" * 43):
                for method, body in (("GET", None), ("POST", b"{}"), ("DELETE", None)):
                    status, reply = call(cluster, method, prefix + path, body, token=token)
                    if path == "/healthz":
                        assert status in (200, 405), (path, method, status, reply)
                    else:
                        assert status == 401, (prefix + path, method, status, reply)
                        assert "token" in reply["errors"][0]


def test_cli_names_an_unknown_config_key_and_a_short_token(tmp_path):
    run = [sys.executable, "-m", "runtime.cli", "jobmanager", "-D", "rest.prot=8081"]
    done = subprocess.run(run, capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "rest.prot" in done.stderr
    weak = tmp_path / "token"
    weak.write_text("short")
    weak.chmod(0o600)
    done = subprocess.run([sys.executable, "-m", "runtime.cli", "jobmanager", "-D", "rest.port=0",
                           "-D", f"security.token-file={weak}"], capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "too short" in done.stderr
