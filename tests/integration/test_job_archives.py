"""Job archives in S3 (moto's server): written by the function every JobManager archive write goes
through, and served by ``flinkbench historyserver`` reading them from the bucket, as a history server
in front of an object store does."""
from __future__ import annotations


import pytest

from runtime.client import RestClient
from runtime.jobmanager.archive import write_archive
from runtime.states import JobStatus
from tests.helpers.clusters import wait_until
from tests.helpers.history import history_server
from tests.helpers.s3 import BUCKET, s3_server
from tests.unit.jobmanager.test_archive import archived

TOKEN = "s3-history-token-" + "x" * 30


@pytest.fixture
def s3(monkeypatch):
    with s3_server(monkeypatch) as client:
        yield client


def test_the_history_server_serves_archives_from_s3_and_finds_new_ones(s3, tmp_path):
    directory = f"s3://{BUCKET}/archives"
    first = archived("1" * 32, JobStatus.FAILED)
    write_archive(directory, first)
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET)["Contents"]]
    assert keys == [f"archives/{'1' * 32}.json"], "written whole, nothing staged left behind"
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN)
    token_file.chmod(0o600)
    with history_server(directory, str(token_file)) as url, RestClient(url, token=TOKEN) as client:
        assert [j["jid"] for j in client.get("/jobs/overview")["jobs"]] == ["1" * 32]
        assert client.get(f"/jobs/{'1' * 32}/exceptions")["root-exception"] == "ValueError: boom"
        later = archived("2" * 32, JobStatus.FINISHED)
        write_archive(directory, later)
        wait_until(lambda: len(client.get("/jobs/overview")["jobs"]) == 2, 30, "the new archive listed")
        assert client.get(f"/jobs/{'2' * 32}")["state"] == "FINISHED"
