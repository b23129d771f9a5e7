"""The REST layer against a fake Dispatcher: authentication first, /v1 and bare paths, JSON errors,
body limits, Flink's field names, and an OpenAPI description that lists every route."""
from __future__ import annotations

import json
import re
import socket
from urllib.parse import urlparse

import pytest

from runtime.jobmanager.rest import all_routes, document
from tests.unit.rest.conftest import JOB, LIMIT, TOKEN, VERTEX

METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS")


def sample(path: str) -> str:
    return re.sub(r":(\w+)", lambda m: {"jobid": JOB, "vertexid": VERTEX}.get(m.group(1), "feedc0de"), path)


def body_of(raw: bytes) -> dict:
    return json.loads(raw) if raw else {}


def test_the_openapi_description_lists_every_route_and_method(server):
    doc = document()
    for route in all_routes():
        item = doc["paths"][route.openapi_path]
        assert set(item) == set(route.operations()) and item, route.path
    status, _, raw = server.call("GET", "/v1/openapi.json")
    assert status == 200 and json.loads(raw) == json.loads(json.dumps(doc))
    assert doc["servers"] == [{"url": "/v1"}] and doc["paths"]["/healthz"]["get"]["security"] == []


@pytest.mark.parametrize("route", all_routes(), ids=lambda r: r.path)
def test_without_the_token_every_path_and_method_is_401_json(server, route):
    path = sample(route.path)
    for prefix in ("", "/v1"):
        for method in METHODS:
            for token in (None, "x" * 43, TOKEN[:-1]):
                status, headers, raw = server.call(method, prefix + path, b"{}" if method in ("POST", "PUT") else None,
                                                   token=token)
                if route.path == "/healthz":
                    assert status in (200, 405), (method, prefix + path, status)
                    continue
                assert status == 401, (method, prefix + path, status, raw)
                if method != "HEAD":
                    assert "token" in body_of(raw)["errors"][0]
                    assert headers["Content-Type"] == "application/json"


def test_unknown_paths_are_401_without_the_token_and_404_json_with_it(server):
    for path in ("/nope", "/v1/nope", "/v2/jobs", "/jobs/x/y/z/w", "/v1"):
        assert server.call("GET", path, token=None)[0] == 401
        status, headers, raw = server.call("GET", path)
        assert status == 404 and "no REST route" in body_of(raw)["errors"][0], (path, raw)
        assert headers["Content-Type"] == "application/json"


def test_every_route_answers_under_v1_and_bare_alike(server):
    for route in all_routes():
        if "get" not in route.operations() or route.websocket:
            continue
        bare, versioned = server.call("GET", sample(route.path)), server.call("GET", "/v1" + sample(route.path))
        assert bare[0] == versioned[0] and bare[0] < 500, (route.path, bare, versioned)


def test_a_method_a_route_does_not_take_is_405_json(server):
    for method, path in (("POST", "/overview"), ("DELETE", f"/jobs/{JOB}"), ("PUT", "/v1/jobs/overview")):
        status, _, raw = server.call(method, path, b"{}" if method != "DELETE" else None)
        assert status == 405 and body_of(raw)["errors"], (method, path, raw)


def test_a_websocket_path_without_an_upgrade_is_400_json(server):
    status, _, raw = server.call("GET", "/events")
    assert status == 400 and "WebSocket" in body_of(raw)["errors"][0]


def raw_request(server, head: str, body: bytes = b"") -> tuple[int, dict]:
    url = urlparse(server.url)
    with socket.create_connection((url.hostname, url.port), timeout=10) as sock:
        sock.sendall(head.encode() + body)
        reply = b""
        while b"\r\n\r\n" not in reply or len(reply.split(b"\r\n\r\n", 1)[1]) < _length(reply):
            chunk = sock.recv(65536)
            if not chunk:
                break
            reply += chunk
    head_part, _, rest = reply.partition(b"\r\n\r\n")
    return int(head_part.split(b" ")[1]), json.loads(rest[:_length(reply)])


def _length(reply: bytes) -> int:
    found = re.search(rb"Content-Length: (\d+)", reply)
    return int(found.group(1)) if found else 0


def test_a_body_over_the_limit_is_413_before_it_is_read(server):
    status, body = raw_request(server, f"POST /jobs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n"
                                       f"Content-Length: {10 * LIMIT}\r\n\r\n")
    assert status == 413 and "rest.server.max-content-length" in body["errors"][0]
    status, body = raw_request(server, f"POST /jobs HTTP/1.1\r\nHost: x\r\nContent-Length: {10 * LIMIT}\r\n\r\n")
    assert status == 401, "without the token the size does not matter: 401"


def test_a_chunked_body_that_grows_past_the_limit_is_413(server):
    chunk = b"x" * 1000
    body = b"".join(b"%x\r\n%s\r\n" % (len(chunk), chunk) for _ in range(2 * LIMIT // 1000)) + b"0\r\n\r\n"
    status, reply = raw_request(server, f"POST /jobs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n"
                                        "Transfer-Encoding: chunked\r\n\r\n", body)
    assert status == 413, reply


@pytest.mark.parametrize("raw, needle", [
    (b"{not json", "not valid JSON"), (b"\xff\xfe", "not valid JSON"), (b"[" * 1500 + b"]" * 1500, "nests deeper"),
    (b'{"target-directory": 5}', "'target-directory' must be a string"), (b'"text"', "JSON object"),
    (b'{"cancel-job": "yes"}', "'cancel-job' must be true or false"),
])
def test_malformed_bodies_are_400_naming_the_problem(server, raw, needle):
    status, _, body = server.call("POST", f"/v1/jobs/{JOB}/savepoints", raw)
    assert status == 400 and needle in body_of(body)["errors"][0], body


def test_gateway_errors_map_to_404_and_409(server):
    status, _, raw = server.call("GET", "/jobs/" + "f" * 32)
    assert status == 404 and "not found" in body_of(raw)["errors"][0]
    status, _, raw = server.call("POST", f"/jobs/{JOB}/stop", b'{"drain": true}')
    assert status == 409 and "FINISHED" in body_of(raw)["errors"][0]
    assert server.call("GET", f"/jobs/{JOB}/vertices/nope")[0] == 404


def test_job_list_counts_tasks_by_flinks_lower_case_state_names_plus_total(server):
    status, _, raw = server.call("GET", "/v1/jobs/overview")
    job = body_of(raw)["jobs"][0]
    assert job["jid"] == JOB and job["state"] == "RUNNING" and job["end-time"] == -1
    assert job["tasks"]["running"] == 3 and job["tasks"]["total"] == 3 and "RUNNING" not in job["tasks"]


def test_vertex_metrics_carry_flinks_names_beside_ours(server):
    status, _, raw = server.call("GET", f"/jobs/{JOB}/vertices/{VERTEX}")
    vertex = body_of(raw)
    assert vertex["metrics"]["read-records"] == 600 and vertex["metrics"]["read-records-complete"] is True
    sub = vertex["subtasks"][1]
    assert sub["metrics"]["read-records"] == sub["metrics"]["records_in"] == 200
    assert sub["metrics"]["write-records"] == 100 and sub["metrics"]["read-bytes"] == 2000
    assert sub["metrics"]["write-bytes"] == 1000 and sub["taskmanager-id"] == "tm-1"
    details = body_of(server.call("GET", f"/jobs/{JOB}")[2])
    assert details["vertices"][0]["metrics"]["write-records"] == 300 and details["isStoppable"] is True


def test_backpressure_levels_and_watermarks_follow_flink(server):
    bp = body_of(server.call("GET", f"/jobs/{JOB}/vertices/{VERTEX}/backpressure")[2])
    assert [s["backpressureLevel"] for s in bp["subtasks"]] == ["ok", "low", "high"]
    assert bp["backpressureLevel"] == "high" and bp["status"] == "ok"
    marks = body_of(server.call("GET", f"/jobs/{JOB}/vertices/{VERTEX}/watermarks")[2])
    assert marks[0] == {"id": "0.currentInputWatermark", "value": "1700000000500"}


def test_overview_reports_the_flink_rest_version_and_ours_apart(server):
    overview = body_of(server.call("GET", "/overview")[2])
    assert overview["flink-version"] == "2.3.0" and overview["flinkbench-version"] != "2.3.0"


def test_operations_trigger_and_poll(server):
    trigger = body_of(server.call("POST", f"/jobs/{JOB}/checkpoints", b'{"checkpointType": "FULL"}')[2])
    done = body_of(server.call("GET", f"/jobs/{JOB}/checkpoints/{trigger['request-id']}")[2])
    assert done == {"status": {"id": "COMPLETED"}, "operation": {"checkpointId": 7}}
    assert server.call("POST", f"/jobs/{JOB}/checkpoints", b'{"checkpointType": "SOME"}')[0] == 400
    server.call("POST", f"/jobs/{JOB}/checkpoints", b'{"checkpointType": "INCREMENTAL"}')
    assert server.dispatcher.checkpoints_full[-2:] == [True, False], "FULL refers to no earlier checkpoint"
    trigger = body_of(server.call("POST", f"/jobs/{JOB}/savepoints", b'{"target-directory": "/x", "formatType": '
                                                                     b'"CANONICAL", "triggerId": null}')[2])
    done = body_of(server.call("GET", f"/jobs/{JOB}/savepoints/{trigger['request-id']}")[2])
    assert done["operation"] == {"location": "file:///sp/x"}
    status, _, raw = server.call("POST", "/savepoint-disposal", b'{"savepoint-path": "/nope"}')
    done = body_of(server.call("GET", f"/savepoint-disposal/{body_of(raw)['request-id']}")[2])
    assert status == 200 and done["operation"]["failure-cause"]["stack-trace"] == "no _metadata"
    assert server.call("GET", f"/jobs/{JOB}/savepoints/{'0' * 32}")[0] == 404


def test_status_cancel_and_submit(server):
    assert body_of(server.call("GET", f"/v1/jobs/{JOB}/status")[2]) == {"status": "RUNNING"}
    assert server.call("PATCH", f"/v1/jobs/{JOB}?mode=cancel")[0] == 202
    assert server.dispatcher.cancelled[-1] == JOB
    assert server.call("PATCH", f"/v1/jobs/{JOB}?mode=stop")[0] == 400
    status, _, raw = server.call("POST", "/jobs", b'{"job_graph": {"name": "g"}}')
    assert status == 202 and body_of(raw) == {"jobUrl": f"/jobs/{JOB}", "jobid": JOB}
    assert server.call("POST", "/jobs", b'{"job_graph": []}')[0] == 400


def test_holding_the_leader_election_is_fault_injection_and_refused_when_that_is_off(server):
    status, _, raw = server.call("POST", "/jobmanager/hold-election?seconds=5")
    assert status == 403 and "fault injection is disabled" in body_of(raw)["errors"][0]
