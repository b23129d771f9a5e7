"""Shared fixtures: real local clusters, and a guard that no test leaves a process behind."""
from __future__ import annotations

import os

import psutil
import pytest

os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")

from tests.helpers.clusters import FAST_FAILURE_CONFIG, started_cluster  # noqa: E402


@pytest.fixture(scope="session")
def cluster(tmp_path_factory):
    """One shared cluster of 2 TaskManagers x 2 slots (the demo's shape) for tests that do not break it."""
    with started_cluster(tmp_path_factory.mktemp("shared-cluster"), taskmanagers=2, slots=2) as c:
        yield c


@pytest.fixture
def fresh_cluster(tmp_path):
    """A cluster of its own, for tests that kill or starve it; call with the shape you need."""
    made = []

    def make(taskmanagers=2, slots=2, **config):
        ctx = started_cluster(tmp_path / f"c{len(made)}", taskmanagers=taskmanagers, slots=slots,
                              config={**FAST_FAILURE_CONFIG, **config})
        c = ctx.__enter__()
        made.append(ctx)
        return c

    yield make
    for ctx in made:
        ctx.__exit__(None, None, None)


@pytest.fixture(scope="session", autouse=True)
def no_leftover_processes():
    """Fail the run if any child process of the test session outlives it."""
    before = {p.pid for p in psutil.Process().children(recursive=True)}
    yield
    left = [p for p in psutil.Process().children(recursive=True) if p.pid not in before and p.is_running()
            and p.status() != psutil.STATUS_ZOMBIE]
    for p in left:
        p.kill()
    assert not left, f"processes left behind: {[(p.pid, ' '.join(p.cmdline()[:4])) for p in left]}"
