"""Apache Flink 2.3's own web dashboard in front of a Flinkbench JobManager, in headless Chromium.

The dashboard's static files come from the apache-flink wheel's flink-dist jar (tests.helpers.flink_web
unpacks them into the test's temporary folder); a proxy in the test serves them and forwards the REST calls
the dashboard makes to the shared cluster with its token. On a running job with checkpoints the browser
sees the job graph with each task's busy and backpressured time, a task's metrics, the checkpoint list and
a checkpoint's details down to each subtask, the TaskManager list and one TaskManager's metrics and logs,
with no error in the browser's console and no REST call the JobManager refused. Screenshots go to
test-output/ui/flink-dashboard-*.png.
"""
from __future__ import annotations

import re

import pytest

from tests.helpers.clusters import wait_until
from tests.helpers.flink_web import FlinkWebDashboard, unpack_web
from tests.helpers.pyflink import pyflink
from tests.ui.browser import chromium_context, chromium_missing_reason, screenshot

pytestmark = [pytest.mark.ui, pytest.mark.slow,
              pytest.mark.skipif(chromium_missing_reason() is not None, reason=chromium_missing_reason() or "")]

UI_TIMEOUT_MS = 60_000


@pytest.fixture(scope="module")
def running_job(cluster):
    """The clicks job at 2,000 rows/s with checkpoints every second, once it has read rows and checkpointed."""
    from runtime.examples import clicks

    env = cluster.environment()
    env.set_parallelism(2)
    env.enable_checkpointing("1 s")
    clicks.build(env, rows=None, rows_per_second=2000, realtime=True)
    job = env.execute_async("flink-dashboard-compat")
    client = cluster.client
    wait_until(lambda: all(v["metrics"]["read-records"] + v["metrics"]["write-records"] > 0
                           for v in client.get(f"/jobs/{job.job_id}")["vertices"]), 240, "every task to move rows")
    wait_until(lambda: client.get(f"/jobs/{job.job_id}/checkpoints")["counts"]["completed"] >= 2, 120,
               "two completed checkpoints")
    yield job
    job.cancel()
    job.wait(120)


@pytest.fixture(scope="module")
def dashboard(cluster, tmp_path_factory):
    web = unpack_web(pyflink(), tmp_path_factory.mktemp("flink-web"))
    with FlinkWebDashboard(web, cluster.url, cluster.token) as served:
        yield served


@pytest.fixture
def browser_page(tmp_path):
    errors: list[str] = []
    with chromium_context(tmp_path / "profile") as context:
        page = context.new_page()
        page.set_default_timeout(UI_TIMEOUT_MS)
        page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
        page.on("pageerror", lambda err: errors.append(str(err)))
        yield page, errors


def visible_text(page, selector: str, pattern: str) -> None:
    """Wait until the first visible ``selector``'s text (its cells run together) matches ``pattern``."""
    page.locator(f"{selector}:visible").filter(has_text=re.compile(pattern)).first.wait_for()


def test_flinks_dashboard_renders_a_flinkbench_job_its_checkpoints_and_taskmanagers(cluster, running_job, dashboard,
                                                                                    browser_page):
    page, errors = browser_page
    job_id = running_job.job_id
    details = cluster.client.get(f"/jobs/{job_id}")
    window = next(v for v in details["vertices"] if v["name"].startswith("Window"))

    page.goto(f"{dashboard.url}/#/job/running")  # Flink 2.3's overview lists applications; Flinkbench runs jobs
    visible_text(page, "flink-job-list", r"flink-dashboard-compat.*RUNNING")
    screenshot(page, "flink-dashboard-jobs")

    page.goto(f"{dashboard.url}/#/job/running/{job_id}/overview")
    for vertex in details["vertices"]:
        visible_text(page, "flink-dagre", re.escape(vertex["name"]))
    visible_text(page, "flink-dagre", r"Busy \(max\): \d+(\.\d+)?%")  # from .../subtasks/metrics
    screenshot(page, "flink-dashboard-graph")

    page.goto(f"{dashboard.url}/#/job/running/{job_id}/overview/{window['id']}/metrics")
    page.locator("flink-job-overview-drawer nz-select:visible").first.click()
    page.locator(".ant-select-item-option", has_text="0.numRecordsIn").first.click()
    visible_text(page, "flink-job-overview-drawer", r"0\.numRecordsIn")
    screenshot(page, "flink-dashboard-vertex-metrics")

    page.goto(f"{dashboard.url}/#/job/running/{job_id}/checkpoints")
    visible_text(page, "flink-job-checkpoints", r"Completed: [1-9]")
    page.locator(".ant-tabs-tab", has_text="History").click()
    page.locator("flink-job-checkpoints .ant-table-row-expand-icon:visible").first.click()
    visible_text(page, "flink-job-checkpoints-detail", re.escape(window["name"]))
    visible_text(page, "flink-job-checkpoints-detail", r"2/2 \(100%\)")
    page.locator("flink-job-checkpoints-detail .ant-table-row-expand-icon:visible").first.click()
    visible_text(page, "flink-job-checkpoints-subtask", "Minimum")
    rows = page.locator("flink-job-checkpoints-subtask:visible").first.locator("tbody tr:visible").all_inner_texts()
    acknowledged = [r for r in rows if re.match(r"\d+\t\d{4}-\d\d-\d\d ", r)]  # index, acknowledgement time
    assert len(acknowledged) == 2, rows
    screenshot(page, "flink-dashboard-checkpoint-details")

    tm_ids = [tm["id"] for tm in cluster.client.get("/taskmanagers")["taskmanagers"] if tm["state"] == "REGISTERED"]
    page.goto(f"{dashboard.url}/#/task-manager")
    for tm_id in tm_ids:
        visible_text(page, "flink-task-manager-list", re.escape(tm_id))
    page.goto(f"{dashboard.url}/#/task-manager/{tm_ids[0]}/metrics")
    visible_text(page, "flink-task-manager", r"JVM Heap Size\s*\d+(\.\d+)? (MB|GB)")  # the Spark JVM's heap
    visible_text(page, "flink-task-manager-metrics", r"\d+(\.\d+)? MB / \d+(\.\d+)? (MB|GB)")  # heap used / max
    screenshot(page, "flink-dashboard-taskmanager-metrics")

    assert not errors, f"errors in the browser's console: {errors[:5]}"
    assert not dashboard.failed_calls(), f"REST calls the JobManager refused: {dashboard.failed_calls()[:10]}"
