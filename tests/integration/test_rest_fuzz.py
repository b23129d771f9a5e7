"""Property-based fuzzing of a real JobManager's REST API (schemathesis, from the OpenAPI description it
serves): valid and invalid paths, parameters and bodies, with the token and without. No answer may be
a server error or carry a traceback, and every request without the token is 401 with a JSON body.

The JobManager runs alone (no TaskManagers: jobs that get accepted wait for slots and fail), with
fault injection off, so no generated request can kill anything.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import schemathesis
from hypothesis import HealthCheck, settings

from runtime.jobmanager.rest import document
from tests.helpers.clusters import wait_until

pytestmark = pytest.mark.slow

schema = schemathesis.openapi.from_dict(document())
schema.config.generation.update(modes=[schemathesis.GenerationMode.POSITIVE, schemathesis.GenerationMode.NEGATIVE])

FUZZ = settings(max_examples=int(os.environ.get("FLINKBENCH_FUZZ_EXAMPLES", "30")), deadline=None,
                suppress_health_check=list(HealthCheck), derandomize=True)


@pytest.fixture(scope="module")
def jobmanager(tmp_path_factory):
    work = tmp_path_factory.mktemp("fuzzed-jobmanager")
    ready = work / "ready.json"
    with open(work / "jobmanager.log", "wb") as log:
        proc = subprocess.Popen([sys.executable, "-m", "runtime.cli", "jobmanager", "--ready-file", str(ready),
                                 "-D", "rest.port=0", "-D", f"cluster.working-dir={work}",
                                 "-D", "slot.request.timeout=2 s"], stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_until(lambda: ready.exists() or proc.poll() is not None, 60, "the JobManager's ready file")
        assert proc.poll() is None, (work / "jobmanager.log").read_text()
        info = json.loads(ready.read_text())
        with open(info["token_file"]) as fh:
            yield info["url"], fh.read().strip(), proc
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    log_text = (work / "jobmanager.log").read_text()
    assert "Traceback" not in log_text, log_text[-3000:]


def check(response, unauthenticated: bool, path: str) -> None:
    text = response.text
    assert response.status_code < 500, f"{response.status_code} for {response.request.method} {path}: {text[:500]}"
    assert "Traceback" not in text and 'File "' not in text, text[:500]
    if unauthenticated and path != "/healthz":
        assert response.status_code == 401, f"{response.status_code} without the token for {path}: {text[:300]}"
        assert "token" in response.json()["errors"][0]
    if response.status_code >= 400 and response.request.method != "HEAD":
        assert isinstance(response.json().get("errors"), list), text[:300]


@schema.parametrize()
@FUZZ
def test_no_request_gets_a_server_error_and_none_passes_without_the_token(case, jobmanager):
    url, token, proc = jobmanager
    for unauthenticated in (False, True):
        headers = {} if unauthenticated else {"Authorization": f"Bearer {token}"}
        case.headers = {k: v for k, v in (case.headers or {}).items() if k.lower() != "authorization"}
        response = case.call(base_url=url + "/v1", headers=headers, timeout=30)
        check(response, unauthenticated, case.operation.path)
    assert proc.poll() is None, "the JobManager is still running"


def test_the_served_description_is_the_generated_one(jobmanager):
    import urllib.request

    url, token, _ = jobmanager
    req = urllib.request.Request(url + "/v1/openapi.json", headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(req, timeout=10) as resp:
        served = json.loads(resp.read())
    assert served == json.loads(json.dumps(document()))
