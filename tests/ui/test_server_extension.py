"""The Jupyter server extension against a real JupyterLab and a real JobManager: it requires Jupyter's
authentication on every route, forwards REST and the event stream with the cluster token added, never
lets the token reach the client, and answers 502 with a message when the JobManager is down."""
from __future__ import annotations

import json
import re

import pytest
import websocket

from kernel_magics.server.handlers import routes
from tests.helpers.ports import free_port

PREFIX = "/flinkbench"


def open_events(lab, token: str | None = "default"):
    headers = [f"Authorization: token {lab.token if token == 'default' else token}"] if token else []
    return websocket.create_connection(f"ws://127.0.0.1:{lab.port}{PREFIX}/events", header=headers, timeout=20)


GROUP = re.compile(r"\((?:\[[^\]]*\]|[^()])*\)")  # a capture group, e.g. (.*) or ([^/]+)
SAMPLES = {"(.*)": "overview"}  # the REST path forwarded; any other group: a job id
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
        status, _, body = lab_for_jobmanager.request(method, path, body={} if method != "GET" else None, token=None)
        assert status in (403, 405), f"{method} {path} answered {status} without credentials: {body[:200]!r}"
        status, _, _ = lab_for_jobmanager.request(method, path, body={} if method != "GET" else None, token="wrong")
        assert status in (403, 405), f"{method} {path} answered {status} with a wrong token"


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
