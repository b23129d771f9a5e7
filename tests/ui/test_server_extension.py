"""The Jupyter server extension against a real JupyterLab and a real JobManager: it requires Jupyter's
authentication on every route, forwards REST and the event stream with the cluster token added, never
lets the token reach the client, and answers 502 with a message when the JobManager is down."""
from __future__ import annotations

import json
import re

import pytest
import websocket

from kernel_magics.server.routes import routes
from tests.helpers.clusters import wait_until
from tests.helpers.ports import free_port

PREFIX = "/flinkbench"


def open_events(lab, token: str | None = "default"):
    headers = [f"Authorization: token {lab.token if token == 'default' else token}"] if token else []
    return websocket.create_connection(f"ws://127.0.0.1:{lab.port}{PREFIX}/events", header=headers, timeout=20)


GROUP = re.compile(r"\((?:\[[^\]]*\]|[^()])*\)")  # a capture group, e.g. (?P<path>.*) or ([^/]+)
SAMPLES = {"(?P<path>.*)": "overview"}  # the REST path forwarded; any other group: a job or kernel id
SAMPLE_ID = "0123456789abcdef0123456789abcdef"


def route_paths() -> list[str]:
    """One concrete URL per route the extension registers (each group filled with a sample), so a new
    route is covered automatically and each request reaches its handler rather than a 404."""
    paths = []
    for pattern, *_ in routes("flinkbench"):
        path = GROUP.sub(lambda m: SAMPLES.get(m.group(0), SAMPLE_ID), pattern).replace("\\", "")
        assert re.fullmatch(pattern, path) and not set("()[]*+?\\") & set(path), (pattern, path)
        paths.append(path)
    return paths


@pytest.mark.parametrize("method", ["GET", "POST", "PATCH", "PUT", "DELETE"])
def test_every_route_requires_jupyter_authentication(lab_for_jobmanager, method):
    for path in route_paths():
        if path.endswith("/events"):
            continue
        for token in (None, "wrong"):
            status, headers, body = lab_for_jobmanager.request(method, path, body={} if method != "GET" else None,
                                                               token=token, follow=False)
            if path.endswith("/dashboard") and method == "GET":  # a browser page: to Jupyter's login first
                assert status == 302 and "/login?next=" in headers["Location"], f"{path} with {token}: {status}"
            else:
                assert status in (403, 405), f"{method} {path} answered {status} with {token}: {body[:200]!r}"


def test_event_stream_requires_jupyter_authentication(lab_for_jobmanager):
    for token in (None, "wrong"):
        with pytest.raises(websocket.WebSocketBadStatusException) as err:
            open_events(lab_for_jobmanager, token)
        assert err.value.status_code == 403


def test_rest_is_forwarded_with_the_cluster_token(lab_for_jobmanager, jobmanager):
    status, overview = lab_for_jobmanager.json("GET", f"{PREFIX}/api/overview")
    assert status == 200
    assert overview == {**jobmanager.client.overview(), "leader": overview["leader"]}
    status, tms = lab_for_jobmanager.json("GET", f"{PREFIX}/api/taskmanagers")
    assert (status, tms) == (200, {"taskmanagers": []})


def test_jobmanager_errors_come_back_with_their_message(lab_for_jobmanager):
    status, body = lab_for_jobmanager.json("GET", f"{PREFIX}/api/jobs/0123456789abcdef")
    assert status == 404 and "not found" in body["errors"][0]
    status, _, payload = lab_for_jobmanager.request("POST", f"{PREFIX}/api/jobs", body=["not", "an", "object"])
    assert status == 400 and "JSON object" in json.loads(payload)["errors"][0]


def test_event_stream_is_forwarded(lab_for_jobmanager, jobmanager):
    ws = open_events(lab_for_jobmanager)
    try:
        first = json.loads(ws.recv())
    finally:
        ws.close()
    assert first["type"] == "ClusterSnapshot"
    assert first["leader"]["url"] == jobmanager.url


def test_the_token_never_reaches_the_client(lab_for_jobmanager, jobmanager):
    token = jobmanager.token
    seen = []
    for path in ("/connection", "/local-cluster", "/api/overview", "/api/config", "/api/taskmanagers",
                 "/api/jobs/overview", "/api/jobs/nope", "/api/no-such-route"):
        status, headers, body = lab_for_jobmanager.request("GET", PREFIX + path)
        seen.append(f"{path} {status} {headers} {body!r}")
    ws = open_events(lab_for_jobmanager)
    try:
        seen.append(ws.recv())
    finally:
        ws.close()
    leaks = [s[:120] for s in seen if token in s]
    assert not leaks, f"the cluster token reached the client in: {leaks}"
    status, connection = lab_for_jobmanager.json("GET", f"{PREFIX}/connection")
    assert connection["url"] == jobmanager.url and connection["source"] == "environment"
    assert connection["token_file"] == jobmanager.token_file


def test_unreachable_jobmanager_gives_502_with_a_message(lab_for_jobmanager, jobmanager):
    dead = f"http://127.0.0.1:{free_port()}"
    status, body = lab_for_jobmanager.json("POST", f"{PREFIX}/connection",
                                           {"url": dead, "token_file": jobmanager.token_file})
    assert status == 200 and body["url"] == dead and body["source"] == "settings"
    try:
        status, body = lab_for_jobmanager.json("GET", f"{PREFIX}/api/overview")
        assert status == 502
        assert body["errors"][0].startswith(f"JobManager at {dead} is unreachable")
        ws = open_events(lab_for_jobmanager)
        try:
            message = json.loads(ws.recv())
        finally:
            ws.close()
        assert message["type"] == "ProxyError" and f"JobManager at {dead} is unreachable" in message["message"]
    finally:
        lab_for_jobmanager.json("POST", f"{PREFIX}/connection", {"url": ""})
    status, _ = lab_for_jobmanager.json("GET", f"{PREFIX}/api/overview")
    assert status == 200, "clearing the chosen JobManager returns to the server's default"


def test_connecting_checks_the_url_and_the_token_file(lab_for_jobmanager, tmp_path):
    status, body = lab_for_jobmanager.json("POST", f"{PREFIX}/connection", {"url": "ftp://somewhere"})
    assert status == 400 and "http://host:port" in body["errors"][0]
    status, body = lab_for_jobmanager.json("POST", f"{PREFIX}/connection",
                                           {"url": "http://127.0.0.1:1", "token_file": str(tmp_path / "missing")})
    assert status == 400 and "cannot read token file" in body["errors"][0]


def test_wrong_token_file_is_reported_as_such(lab_for_jobmanager, jobmanager, tmp_path):
    wrong = tmp_path / "token"
    wrong.write_text("x" * 43)
    wrong.chmod(0o600)
    lab_for_jobmanager.json("POST", f"{PREFIX}/connection", {"url": jobmanager.url, "token_file": str(wrong)})
    try:
        status, body = lab_for_jobmanager.json("GET", f"{PREFIX}/api/overview")
    finally:
        lab_for_jobmanager.json("POST", f"{PREFIX}/connection", {"url": ""})
    assert status == 502 and f"rejected the token from {wrong}" in body["errors"][0]


def test_local_cluster_rejects_a_bad_shape(lab_for_jobmanager):
    status, body = lab_for_jobmanager.json("POST", f"{PREFIX}/local-cluster", {"taskmanagers": 0, "slots": 2})
    assert status == 400 and "TaskManagers" in body["errors"][0]
    status, body = lab_for_jobmanager.json("POST", f"{PREFIX}/local-cluster", {"taskmanagers": "many"})
    assert status == 400


@pytest.mark.slow
def test_local_cluster_starts_and_stops_from_the_server(lab_for_jobmanager, jobmanager):
    status, body = lab_for_jobmanager.json("POST", f"{PREFIX}/local-cluster",
                                           {"taskmanagers": 1, "slots": 1, "fault_injection": False})
    assert status == 200, body
    try:
        assert body["state"] == "running" and body["url"] != jobmanager.url
        status, connection = lab_for_jobmanager.json("GET", f"{PREFIX}/connection")
        assert connection["source"] == "local cluster" and connection["url"] == body["url"]
        status, tms = lab_for_jobmanager.json("GET", f"{PREFIX}/api/taskmanagers")
        assert [tm["slotsNumber"] for tm in tms["taskmanagers"]] == [1]
        status, again = lab_for_jobmanager.json("POST", f"{PREFIX}/local-cluster", {"taskmanagers": 1})
        assert status == 409 and "already running" in again["errors"][0]
    finally:
        status, body = lab_for_jobmanager.json("DELETE", f"{PREFIX}/local-cluster")
    assert status == 200 and body["state"] == "stopped"
    status, connection = lab_for_jobmanager.json("GET", f"{PREFIX}/connection")
    assert connection["url"] == jobmanager.url, "stopping the local cluster returns to the server's default"


# -- the cluster of a notebook's kernel ---------------------------------------------------------------------
def run_in(kernel, code: str) -> str:
    """Run ``code`` in a real kernel of the server; what it printed (a failure fails the test with its traceback)."""
    printed: list[str] = []

    def collect(msg):
        if msg["msg_type"] == "stream":
            printed.append(msg["content"]["text"])
        elif msg["msg_type"] == "error":
            printed.append("\n".join(msg["content"]["traceback"]))

    reply = kernel.execute_interactive(code, timeout=180, output_hook=collect)
    assert reply["content"]["status"] == "ok", "".join(printed)
    return "".join(printed)


def kernel_cluster(lab, kernel_id: str) -> dict:
    status, cluster = lab.json("GET", f"{PREFIX}/kernel/{kernel_id}/cluster")
    assert status == 200, cluster
    return cluster


@pytest.fixture
def kernel_id(lab_for_jobmanager):
    status, kernel = lab_for_jobmanager.json("POST", "/api/kernels", {"name": "python3"})
    assert status == 201, kernel
    yield kernel["id"]
    lab_for_jobmanager.request("DELETE", f"/api/kernels/{kernel['id']}")


def test_a_kernel_tells_the_server_which_cluster_it_follows(lab_for_jobmanager, jobmanager, kernel_id):
    lab = lab_for_jobmanager
    assert kernel_cluster(lab, kernel_id)["state"] == "none"
    with lab.kernel(kernel_id) as kernel:
        run_in(kernel, f"%load_ext kernel_magics\n%flink connect {jobmanager.url} --token-file {jobmanager.token_file}")
        cluster = kernel_cluster(lab, kernel_id)
        assert (cluster["state"], cluster["url"], cluster["source"]) == ("running", jobmanager.url, "notebook kernel")
        assert cluster["token_file"] == jobmanager.token_file and jobmanager.token not in json.dumps(cluster)
        status, overview = lab.json("GET", f"{PREFIX}/kernel/{kernel_id}/api/overview")
        assert status == 200 and overview["leader"]["url"] == jobmanager.url
        status, headers, _ = lab.request("GET", f"{PREFIX}/kernel/{kernel_id}/dashboard?job=abc", follow=False)
        assert status == 302 and headers["Location"].startswith(f"{jobmanager.url}/dashboard/login?code=")
        assert "next=%2Fdashboard%3Fjob%3Dabc" in headers["Location"] and jobmanager.token not in headers["Location"]
        run_in(kernel, "%flink disconnect")
        assert kernel_cluster(lab, kernel_id)["state"] == "none"
        status, body = lab.json("GET", f"{PREFIX}/kernel/{kernel_id}/api/overview")
        assert status == 503 and "follows no cluster" in body["errors"][0]
    status, body = lab.json("GET", f"{PREFIX}/kernel/{SAMPLE_ID}/cluster")
    assert status == 404 and "no kernel" in body["errors"][0]


@pytest.mark.slow
def test_a_kernels_own_cluster_stops_with_it_and_the_server_says_so(lab_for_jobmanager, kernel_id):
    lab = lab_for_jobmanager
    with lab.kernel(kernel_id) as kernel:
        printed = run_in(kernel, "%load_ext kernel_magics\n%flink local --taskmanagers 0")
    link = f"{lab.url}/flinkbench/kernel/{kernel_id}/dashboard"
    assert f"web dashboard: {link}\n" in printed, "the link goes through Jupyter, with no token and no placeholder"
    cluster = kernel_cluster(lab, kernel_id)
    assert cluster["state"] == "running", cluster
    status, headers, _ = lab.request("GET", link[len(lab.url):], follow=False)
    assert status == 302 and headers["Location"].startswith(f"{cluster['url']}/dashboard/login?code=")
    status, _ = lab.json("POST", f"/api/kernels/{kernel_id}/restart")
    assert status == 200
    stopped = wait_until(lambda: (c := kernel_cluster(lab, kernel_id))["state"] != "running" and c, 60,
                         "the server to see the kernel's cluster stop")
    assert stopped["state"] == "stopped" and stopped["url"] == cluster["url"], stopped
    assert "stopped with the kernel" in stopped["reason"]
    status, body = lab.json("GET", f"{PREFIX}/kernel/{kernel_id}/api/overview")
    assert status == 410 and f"the cluster at {cluster['url']} stopped" in body["errors"][0]
    with lab.kernel(kernel_id) as kernel:
        run_in(kernel, "%load_ext kernel_magics\n%flink local --taskmanagers 0")
        again = kernel_cluster(lab, kernel_id)
        assert again["state"] == "running" and again["url"] != cluster["url"]
        run_in(kernel, "%flink stop")
    stopped = kernel_cluster(lab, kernel_id)
    assert (stopped["state"], stopped["url"]) == ("stopped", again["url"]) and "%flink stop" in stopped["reason"]
