"""Fixtures for the JupyterLab side: a JobManager to forward to, a real JupyterLab, the built extension."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from runtime.cluster import LocalCluster
from tests.ui.jupyter import JupyterLabServer

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def built_extension():
    """Build and link the lab extension once (scripts/build-extension.sh skips unchanged sources)."""
    result = subprocess.run(["bash", str(REPO / "scripts" / "build-extension.sh")], cwd=REPO, capture_output=True,
                            text=True, env={**os.environ, "VENV": sys.prefix})
    if result.returncode != 0:
        pytest.fail(f"scripts/build-extension.sh failed ({result.returncode}):\n{result.stdout[-3000:]}\n"
                    f"{result.stderr[-3000:]}", pytrace=False)
    return REPO / "kernel_magics" / "labextension"


@pytest.fixture(scope="module")
def jobmanager(tmp_path_factory):
    """A JobManager alone (no TaskManager, so no Spark JVM): enough to test forwarding."""
    with LocalCluster(taskmanagers=0, slots=1, working_dir=str(tmp_path_factory.mktemp("jm"))) as cluster:
        yield cluster


def lab_environment(cluster) -> dict[str, str]:
    """How the Jupyter server (and the kernels it starts) learn about the cluster, as LocalCluster users do."""
    return {"FLINKBENCH_JOBMANAGER_URL": cluster.url, "FLINKBENCH_TOKEN_FILE": cluster.token_file}


@pytest.fixture(scope="module")
def lab_for_jobmanager(tmp_path_factory, jobmanager):
    with JupyterLabServer(tmp_path_factory.mktemp("lab"), lab_environment(jobmanager),
                          server_extension_flag=True) as lab:
        yield lab


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Keep each phase's report on the test item, so browser fixtures can screenshot failures."""
    outcome = yield
    setattr(item, f"report_{call.when}", outcome.get_result())
