"""How a child finds its JobManager's address: the ready file, read whole or not at all, and the wait for it
that lets a TaskManager start together with its JobManager."""
from __future__ import annotations

import asyncio
import json
import os

from runtime.child_process import jobmanager_url_from, read_ready_file
from runtime.security import ensure_token_file, read_token_file


def write_ready(path, url: str) -> None:
    partial = f"{path}.partial"
    with open(partial, "w", encoding="utf-8") as fh:
        json.dump({"url": url, "port": 1, "token_file": "t", "pid": 1}, fh)
    os.replace(partial, path)


def test_a_missing_ready_file_reads_as_none_and_a_written_one_whole(tmp_path):
    path = tmp_path / "jobmanager.ready"
    assert read_ready_file(str(path)) is None
    write_ready(path, "http://127.0.0.1:8081")
    assert read_ready_file(str(path))["url"] == "http://127.0.0.1:8081"


def test_a_taskmanager_started_first_waits_for_the_jobmanagers_address(tmp_path):
    path = tmp_path / "jobmanager.ready"

    async def scenario():
        waiting = asyncio.ensure_future(jobmanager_url_from(str(path), poll_s=0.01))
        await asyncio.sleep(0.05)  # several polls of a file that is not there yet
        assert not waiting.done(), "no address before the JobManager wrote one"
        write_ready(path, "http://127.0.0.1:9000")
        return await asyncio.wait_for(waiting, 5)

    assert asyncio.run(scenario()) == "http://127.0.0.1:9000"


def test_the_token_file_is_written_once_and_then_read(tmp_path):
    path = str(tmp_path / "token")
    token = ensure_token_file(path)
    assert read_token_file(path) == token and oct(os.stat(path).st_mode & 0o777) == "0o600"
    assert ensure_token_file(path) == token, "a second caller (the JobManager after LocalCluster) reads the same"
