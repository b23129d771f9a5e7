"""Shared fixtures: real local clusters, and a guard that no test leaves a process behind."""
from __future__ import annotations

import os

import psutil
import pytest

os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")

from tests.helpers.clusters import FAST_FAILURE_CONFIG, started_cluster  # noqa: E402
from tests.helpers.postgres import jdbc_driver_config  # noqa: E402


@pytest.fixture(scope="session")
def cluster(tmp_path_factory):
    """One shared cluster of 2 TaskManagers x 2 slots (the demo's shape) for tests that do not break it; its Spark
    sessions load the PostgreSQL JDBC driver, for the jdbc scan."""
    with started_cluster(tmp_path_factory.mktemp("shared-cluster"), taskmanagers=2, slots=2,
                         config=jdbc_driver_config()) as c:
        yield c


@pytest.fixture(scope="session")
def spark():
    """A plain Spark session in the test process, for the batch answers results are checked against.

    Its JVM is a child of this process, so teardown ends it too (SparkSession.stop leaves it).
    """
    from pyspark.sql import SparkSession

    from runtime.taskmanager.spark_session import end_classic_jvm

    session = (SparkSession.builder.master("local[1]").appName("expected-answers")
               .config("spark.sql.session.timeZone", "UTC").config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.driver.memory", "512m").getOrCreate())
    yield session
    end_classic_jvm(session)


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


def _alive(process: psutil.Process) -> bool:
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:  # gone or a zombie between the listing and the check
        return False


@pytest.fixture(scope="session", autouse=True)
def no_leftover_processes():
    """Fail the run if any child process of the test session outlives it."""
    before = {p.pid for p in psutil.Process().children(recursive=True)}
    yield
    left = []
    for p in psutil.Process().children(recursive=True):
        if p.pid not in before and _alive(p):
            try:
                left.append((p.pid, " ".join(p.cmdline()[:4])))
                p.kill()
            except psutil.Error:
                pass
    assert not left, f"processes left behind: {left}"


# Modules that take minutes, longest first (from `make test`'s slowest list). pytest-xdist hands out whole
# modules in collection order (`--no-loadscope-reorder`), so starting these first lets the two workers
# finish together instead of one running a long module alone at the end.
LONGEST_FIRST = (
    "tests/notebooks/test_teaching_notebooks.py",
    "tests/integration/test_checkpoints.py",
    "tests/integration/test_resource_provider.py",
    "tests/ui/test_lab_job_graph.py",
    "tests/integration/test_sql_queries.py",
    "tests/integration/test_python_functions.py",
    "tests/install/test_wheel_install.py",
    "tests/integration/test_sql_failures.py",
    "tests/integration/test_jdbc.py",
    "tests/integration/test_spark_engines.py",
    "tests/integration/test_high_availability_zookeeper.py",
    "tests/notebooks/test_live_notebook.py",
    "tests/notebooks/test_readme_notebook.py",
    "tests/notebooks/test_saved_views.py",
)


def pytest_collection_modifyitems(config, items):
    rank = {path: i for i, path in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))  # stable: the rest keep their order
