"""The JobManager's web dashboard at /dashboard: behind the cluster token, and showing the cluster."""
from __future__ import annotations

import urllib.error
import urllib.request

import pytest
from bokeh.client import pull_session

from runtime.security import COOKIE_NAME
from tests.helpers.clusters import wait_until
from tests.helpers.live_checks import rest_slots


def fetch(url: str, headers: dict | None = None) -> tuple[int, str, dict]:
    req = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.status, resp.read().decode(), dict(resp.headers)
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode(), dict(err.headers)


@pytest.mark.parametrize("path", ["/dashboard", "/dashboard?token=not-the-token", "/", "/dashboard/metadata"])
def test_dashboard_refuses_without_the_token(cluster, path):
    status, body, _ = fetch(cluster.url + path)
    assert status == 401
    assert "missing or invalid cluster token" in body and "?token=" in body


def test_dashboard_with_the_token_serves_the_page_and_sets_the_cookie(cluster):
    status, body, headers = fetch(f"{cluster.url}/dashboard?token={cluster.token}")
    assert status == 200 and "Flinkbench dashboard" in body
    cookie = headers.get("Set-Cookie", "")
    assert cookie.startswith(f"{COOKIE_NAME}={cluster.token}") and "HttpOnly" in cookie
    assert fetch(f"{cluster.url}/dashboard", {"Cookie": f"{COOKIE_NAME}={cluster.token}"})[0] == 200
    assert fetch(f"{cluster.url}/dashboard", {"Authorization": f"Bearer {cluster.token}"})[0] == 200
    assert fetch(f"{cluster.url}/overview", {"Authorization": f"Bearer {cluster.token}"})[0] == 200, \
        "the REST API is served beside the dashboard"


def test_dashboard_document_holds_the_slots_that_rest_reports(cluster):
    client = cluster.client

    def dashboard_slots():
        with pull_session(url=f"{cluster.url}/dashboard", arguments={"token": cluster.token}) as session:
            source = session.document.get_model_by_name("slots-source")
            status = session.document.get_model_by_name("status").text
            d = source.data
            live = sorted([t, i, j] for t, i, j, s in zip(d["tm_id"], d["slot"], d["job_id"], d["state"]) if s != "lost")
            return live, status

    slots, status = wait_until(lambda: (r := dashboard_slots())[0] == rest_slots(client) and r, 30,
                               "dashboard slots equal to REST")
    assert len(slots) == 4
    assert "2 TaskManagers" in status and "slots free" in status


def test_the_dashboard_starts_at_its_first_request_and_the_root_leads_there(fresh_cluster):
    cluster = fresh_cluster(0, 1)
    jobmanager = cluster.jobmanager_processes[0]
    assert fetch(f"{cluster.url}/overview", {"Authorization": f"Bearer {cluster.token}"})[0] == 200
    assert "dashboard started" not in jobmanager.log_tail(500), "REST alone leaves the dashboard's app unbuilt"
    status, body, _ = fetch(f"{cluster.url}/", {"Cookie": f"{COOKIE_NAME}={cluster.token}"})  # redirected
    assert status == 200 and "Flinkbench dashboard" in body
    wait_until(lambda: "dashboard started" in jobmanager.log_tail(500), 30, "the JobManager to log its dashboard's start")
