"""'%flink connect' with no arguments: the cluster, token and token file the environment names (a class's
JupyterHub sets them), and one line saying what to set when it names none."""
from __future__ import annotations

import pytest

from kernel_magics.commands.cluster import from_environment
from kernel_magics.errors import FlinkError


def test_the_environment_names_the_cluster_and_its_token_file(monkeypatch):
    monkeypatch.setenv("FLINKBENCH_JOBMANAGER_URL", "http://127.0.0.1:8081,http://127.0.0.1:8082")
    monkeypatch.setenv("FLINKBENCH_TOKEN_FILE", "/srv/students/ann")
    monkeypatch.setenv("FLINKBENCH_TOKEN", "ignored-beside-a-file")
    assert from_environment() == ("http://127.0.0.1:8081", None, "/srv/students/ann")
    monkeypatch.delenv("FLINKBENCH_TOKEN_FILE")
    assert from_environment() == ("http://127.0.0.1:8081", "ignored-beside-a-file", None)


def test_without_a_cluster_in_the_environment_it_says_what_to_set(monkeypatch):
    monkeypatch.delenv("FLINKBENCH_JOBMANAGER_URL", raising=False)
    with pytest.raises(FlinkError, match="set FLINKBENCH_JOBMANAGER_URL and FLINKBENCH_TOKEN_FILE"):
        from_environment()
