"""The JobManager's web dashboard at /dashboard: behind the cluster token, and showing the cluster."""
from __future__ import annotations

import html
import json
import urllib.error
import urllib.request
from urllib.parse import urlsplit

import pytest
from bokeh.client import pull_session

from runtime.security import COOKIE_NAME
from tests.helpers.clusters import wait_until
from tests.helpers.live_checks import rest_slots


BROWSER = {"Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}


class NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def fetch(url: str, headers: dict | None = None, data: bytes | None = None,
          follow: bool = True) -> tuple[int, str, dict]:
    req = urllib.request.Request(url, headers=headers or {}, data=data)
    opener = urllib.request.build_opener() if follow else urllib.request.build_opener(NoRedirects)
    try:
        with opener.open(req, timeout=30) as resp:
            return resp.status, resp.read().decode(), dict(resp.headers)
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode(), dict(err.headers)


@pytest.mark.parametrize("path", ["/dashboard", "/dashboard?token=not-the-token", "/", "/dashboard/metadata"])
def test_dashboard_refuses_api_clients_without_the_token_in_json(cluster, path):
    status, body, headers = fetch(cluster.url + path)
    assert status == 401 and headers["Content-Type"] == "application/json"
    assert "missing or invalid cluster token" in json.loads(body)["errors"][0]


@pytest.mark.parametrize("path", ["/dashboard?page=jobs", "/dashboard?token=not-the-token&page=jobs", "/"])
def test_a_browser_without_the_token_reads_how_to_get_in(cluster, path):
    status, _, headers = fetch(cluster.url + path, BROWSER, follow=False)
    assert status == 302
    location = headers["Location"]
    assert location.startswith("/dashboard/login") and "not-the-token" not in location
    status, page, headers = fetch(cluster.url + location, BROWSER)
    assert status == 200 and headers["Content-Type"].startswith("text/html")
    assert "Flinkbench panel" in page and "%flink local" in page and 'name="token"' in page
    assert ("page%3Djobs" in location) == ("page=jobs" in path), "the login leads back to the page asked for"


def login_link(cluster, next_page: str | None = None) -> dict:
    status, body, _ = fetch(f"{cluster.url}/login-links", {"Authorization": f"Bearer {cluster.token}",
                                                            "Content-Type": "application/json"},
                            json.dumps({"next": next_page} if next_page else {}).encode())
    assert status == 201, body
    return json.loads(body)


def test_a_login_link_opens_the_dashboard_once_and_holds_no_token(cluster):
    link = login_link(cluster, "/dashboard?page=taskmanagers")
    assert link["url"].startswith(f"{cluster.url}/dashboard/login?code=") and cluster.token not in link["url"]
    assert 0 < link["expires-in-s"] <= 3600
    status, _, headers = fetch(link["url"], BROWSER, follow=False)
    assert status == 302 and headers["Location"] == "/dashboard?page=taskmanagers"
    cookie = headers["Set-Cookie"]
    assert cookie.startswith(f"{COOKIE_NAME}={cluster.token};") and "HttpOnly" in cookie and "SameSite=Lax" in cookie
    status, page, _ = fetch(f"{cluster.url}{headers['Location']}", {**BROWSER, "Cookie": f"{COOKIE_NAME}={cluster.token}"})
    assert status == 200 and "Flinkbench dashboard" in page
    status, page, headers = fetch(link["url"], BROWSER, follow=False)
    assert status == 401 and "used already or has expired" in page and "Set-Cookie" not in headers
    status, body, _ = fetch(f"{cluster.url}/login-links", data=b"{}")
    assert status == 401, "only a token holder gets links"


def test_the_login_form_takes_the_token_and_only_the_token(cluster):
    form = {"Content-Type": "application/x-www-form-urlencoded", **BROWSER}
    status, page, headers = fetch(f"{cluster.url}/dashboard/login", form, b"token=wrong&next=/dashboard", follow=False)
    assert status == 401 and "not this cluster's token" in html.unescape(page) and "Set-Cookie" not in headers
    body = f"token={cluster.token}&next=https://example.com/".encode()
    status, _, headers = fetch(f"{cluster.url}/dashboard/login", form, body, follow=False)
    assert status == 302 and headers["Location"] == "/dashboard", "never sent off the dashboard"
    assert urlsplit(headers["Location"]).netloc == "" and "HttpOnly" in headers["Set-Cookie"]


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
