"""The JobManager's dashboard in headless Chromium, page by page and action by action, on the shared cluster.

One browser walks: the overview (cluster figures, every JobManager, running jobs, TaskManagers), the
jobs list, a job with a deliberately slow map (its graph, one node per chained task with the plan's
edges, the slow node painted busy and named by the bottleneck hint; subtasks; checkpoints with their
chart; configuration), a failed job's exceptions with the root cause's trace, a TaskManager, the
TaskManagers list and the JobManager; then savepoint, stop with savepoint and cancel, each confirmed
after showing its REST call and CLI line; the job resumed from that savepoint shows the restored
checkpoint. Screenshots of every step go to test-output/ui/dashboard-*.png.
"""
from __future__ import annotations

import re

import pytest

from tests.helpers.clusters import job_state, wait_until
from tests.ui.browser import chromium_context, chromium_missing_reason, screenshot
from tests.ui.graphs import (build_slow_job, drawn_graph, expected_graph, is_busy_red, painted, slow_node_id,
                             wait_for_bottleneck)

pytestmark = [pytest.mark.ui, pytest.mark.slow,
              pytest.mark.skipif(chromium_missing_reason() is not None, reason=chromium_missing_reason() or "")]

UI_TIMEOUT_MS = 60_000


def start_slow_job(cluster, name: str, savepoint: str | None = None):
    env = cluster.environment()
    env.set_parallelism(1)
    env.enable_checkpointing("1 s")
    if savepoint:
        env.from_savepoint(savepoint)
    build_slow_job(env)
    return env.execute_async(name)


def start_failing_job(cluster):
    def explode(batch):
        raise ValueError("boom on purpose in the dashboard test")

    env = cluster.environment()
    env.set("restart-strategy.type", "none")
    env.from_collection([{"x": 1}, {"x": 2}], schema="x INT").map(explode, schema="x INT").blackhole()
    return env.execute_async("dash-fails")


def ended(cluster, job_id: str) -> None:
    if job_state(cluster.client, job_id) not in ("CANCELED", "FAILED", "FINISHED"):
        cluster.client.patch(f"/jobs/{job_id}?mode=cancel")
    wait_until(lambda: job_state(cluster.client, job_id) in ("CANCELED", "FAILED", "FINISHED"), 60, f"{job_id} ended")


def open_tab(page, title: str, name: str):
    page.locator(".bk-tab", has_text=title).first.click()  # Bokeh's tab headers
    wait_until(lambda: f"tab={name}" in page.url, 10, f"the address to name the {name} tab")


def confirm_action(page, key: str, rest_path: str, cli_word: str, shot: str) -> str:
    """Click an action, check its confirmation shows the REST call and CLI line, confirm, return the outcome."""
    label = {"savepoint": "Savepoint", "stop": "Stop with savepoint", "cancel": "Cancel"}[key]
    page.get_by_role("button", name=label, exact=True).click()
    lines = page.locator("[data-name='api-lines']")
    lines.wait_for()
    text = lines.inner_text()
    assert rest_path in text and f"flinkbench {cli_word}" in text, text
    screenshot(page, f"dashboard-{shot}-confirm")
    page.get_by_role("button", name="Confirm").click()
    outcome = page.locator(f"[data-action='{key}'][data-outcome='done'], [data-action='{key}'][data-outcome='error']")
    outcome.wait_for(timeout=120_000)
    screenshot(page, f"dashboard-{shot}-done")
    assert outcome.get_attribute("data-outcome") == "done", outcome.inner_text()
    return outcome.inner_text()


def test_every_dashboard_page_and_action(cluster, tmp_path):
    slow = start_slow_job(cluster, "dash-slow")
    failing = start_failing_job(cluster)
    resumed = None
    try:
        with chromium_context(tmp_path / "profile") as context:
            page = context.new_page()
            page.set_default_timeout(UI_TIMEOUT_MS)
            try:
                resumed = walk_pages_and_actions(page, cluster, slow, failing)
            except BaseException:
                screenshot(page, "FAILED-dashboard-pages")
                raise
    finally:
        for job in (slow, failing, resumed):
            if job is not None:
                ended(cluster, job.job_id)


def walk_pages_and_actions(page, cluster, slow, failing):
    base = cluster.url
    # -- overview ------------------------------------------------------------------------------
    page.goto(f"{base}/dashboard?token={cluster.token}")
    page.locator("[data-page='overview']").wait_for()
    jobmanagers = page.locator("table[data-name='jobmanagers'] tr")
    wait_until(lambda: jobmanagers.count() == 2, 30, "one JobManager listed (header + one row)")
    assert cluster.url in jobmanagers.nth(1).inner_text() and "leader" in jobmanagers.nth(1).inner_text()
    page.locator("table[data-name='jobs'] >> text=dash-slow").wait_for()
    assert page.locator("table[data-name='taskmanagers'] tr").count() == 3
    screenshot(page, "dashboard-overview")

    # -- jobs list, then the slow job's graph ----------------------------------------------
    page.get_by_role("link", name="Jobs", exact=True).click()
    page.locator("[data-page='jobs']").wait_for()
    page.locator("table[data-name='jobs'] >> text=dash-fails").wait_for()
    screenshot(page, "dashboard-jobs")
    page.get_by_role("link", name="dash-slow", exact=True).click()
    page.locator("table[data-name='job'] >> text=RUNNING").wait_for(timeout=180_000)
    assert f"job={slow.job_id}" in page.url
    check_graph(page, cluster, slow.job_id)

    # -- subtasks, a TaskManager from there, checkpoints, configuration --------------------
    open_tab(page, "Subtasks", "subtasks")
    subtasks = page.locator("[data-name^='subtasks-'] tr")
    wait_until(lambda: subtasks.count() >= 6, 30, "a row per subtask of the three tasks")
    screenshot(page, "dashboard-job-subtasks")
    open_tab(page, "Checkpoints", "checkpoints")
    completed = page.locator("table[data-name='checkpoint-history'] >> text=COMPLETED")
    completed.first.wait_for(timeout=120_000)
    assert page.locator(".bk-Canvas, canvas").count() >= 1
    screenshot(page, "dashboard-job-checkpoints")
    open_tab(page, "Configuration", "configuration")
    page.locator("table[data-name='checkpoint-config'] >> text=interval").first.wait_for()
    screenshot(page, "dashboard-job-configuration")
    page.reload()  # the tab is part of the address
    page.locator("table[data-name='checkpoint-config']").wait_for()

    # -- the failed job's exceptions: the root cause with its trace -------------------------
    wait_until(lambda: job_state(cluster.client, failing.job_id) == "FAILED", 180, "the failing job to fail")
    page.goto(f"{base}/dashboard?job={failing.job_id}&tab=exceptions")
    root = page.locator("[data-name='root-exception']")
    root.wait_for()
    assert "boom on purpose" in root.inner_text()
    assert page.locator("details[data-name='exception']").count() >= 1, "the failure is in the history too"
    screenshot(page, "dashboard-job-exceptions")

    # -- TaskManagers and the JobManager ----------------------------------------------------
    page.get_by_role("link", name="TaskManagers", exact=True).click()
    page.locator("[data-page='taskmanagers']").wait_for()
    tm_links = page.locator("table[data-name='taskmanagers'] a")
    wait_until(lambda: tm_links.count() == 2, 30, "both TaskManagers listed")
    screenshot(page, "dashboard-taskmanagers")
    tm_links.first.click()
    page.locator("table[data-name='taskmanager'] >> text=Spark session master").wait_for()
    assert page.locator("table[data-name='slots'] tr").count() == 3
    screenshot(page, "dashboard-taskmanager")
    page.get_by_role("link", name="JobManager", exact=True).click()
    page.locator("table[data-name='jobmanager'] >> text=leader").first.wait_for()
    page.locator("table[data-name='configuration'] >> text=rest.port").wait_for()
    assert "INFO" in page.locator("pre[data-name='log']").inner_text(), "the JobManager's recent log lines"
    screenshot(page, "dashboard-jobmanager")

    # -- actions: savepoint, stop with savepoint, then cancel the job resumed from it -------
    page.goto(f"{base}/dashboard?job={slow.job_id}")
    page.locator("table[data-name='job'] >> text=RUNNING").wait_for()
    text = confirm_action(page, "savepoint", f"POST /jobs/{slow.job_id}/savepoints", "savepoint", "savepoint")
    assert "completed" in text
    text = confirm_action(page, "stop", f"POST /jobs/{slow.job_id}/stop", "stop", "stop")
    location = re.search(r"completed: (\S+)", text).group(1)
    wait_until(lambda: job_state(cluster.client, slow.job_id) == "FINISHED", 120, "the stopped job to finish")
    resumed = start_slow_job(cluster, "dash-resumed", savepoint=location)
    page.goto(f"{base}/dashboard?job={resumed.job_id}&tab=checkpoints")
    page.locator("table[data-name='checkpoint-counts'] >> text=restored from").wait_for()
    wait_until(lambda: "#" in page.locator("table[data-name='checkpoint-counts'] tr").last.inner_text(), 120,
               "the restored savepoint named")
    page.locator("table[data-name='job'] >> text=RUNNING").wait_for(timeout=180_000)
    screenshot(page, "dashboard-restored")
    confirm_action(page, "cancel", f"PATCH /jobs/{resumed.job_id}?mode=cancel", "cancel", "cancel")
    wait_until(lambda: job_state(cluster.client, resumed.job_id) == "CANCELED", 60, "the resumed job cancelled")
    page.locator("table[data-name='job'] >> text=CANCELED").wait_for()
    return resumed


def check_graph(page, cluster, job_id: str) -> None:
    """One node per chained task, the plan's edges with their exchange kinds, the slow map painted busy."""
    expected_nodes, expected_edges = expected_graph(cluster.client, job_id)
    assert len(expected_nodes) == 3, expected_nodes
    graph = page.locator("[data-job-id]").filter(has=page.locator(".graph-nodes")).first
    wait_until(lambda: len(drawn_graph(page)[0]) == 3, 60, "the graph drawn with its three tasks")
    nodes, edges = drawn_graph(page)
    assert set(nodes) == set(expected_nodes)
    assert edges == expected_edges
    assert {kind for _, _, kind in edges} == {"REBALANCE", "HASH"}
    slow_id = slow_node_id(expected_nodes)
    node = wait_for_bottleneck(lambda: drawn_graph(page)[0], slow_id)
    hint = page.locator("text=limits this job").first
    hint.wait_for(timeout=60_000)
    assert "Slow map" in hint.inner_text()
    assert graph.get_attribute("data-bottleneck") == slow_id
    figure = page.locator(".flinkbench-graph-figure").first
    wait_until(lambda: is_busy_red(painted(figure.screenshot(), *(float(node[k]) for k in ("x", "y", "width", "height")))),
               30, "the slow map's box painted on the busy end of the scale")
    screenshot(page, "dashboard-job-graph")
