"""The job graph in JupyterLab, in headless Chromium, against a local cluster of two JobManagers (file HA):
a %%flink cell with a deliberately slow map shows its graph under the cell (one node per chained task,
the plan's edges, the slow node painted busy, the bottleneck hint naming it); the side panel draws the
same graph at the same positions; then the panel's remaining actions: stop with savepoint, kill the
leading JobManager (the panel follows the new leader), start and stop a local cluster of its own.
Screenshots go to test-output/ui/."""
from __future__ import annotations

import nbformat
import pytest

from runtime.cluster import LocalCluster
from runtime.errors import ClusterError
from tests.helpers.clusters import FAST_FAILURE_CONFIG, job_state, wait_until
from tests.ui.browser import chromium_context, chromium_missing_reason, confirm_dialog, open_panel, screenshot
from tests.ui.conftest import lab_environment
from tests.ui.graphs import (SLOW_CELL_BODY, drawn_graph, expected_graph, is_busy_red, painted, slow_node_id,
                             wait_for_bottleneck)
from tests.ui.jupyter import JupyterLabServer

pytestmark = [pytest.mark.ui, pytest.mark.slow,
              pytest.mark.skipif(chromium_missing_reason() is not None, reason=chromium_missing_reason() or "")]

JOB = "lab-slow"
START_TIMEOUT_MS = 180_000
CONSOLE_ERRORS: list[str] = []


@pytest.fixture(scope="module")
def ha_cluster(tmp_path_factory):
    with LocalCluster(2, 2, {**FAST_FAILURE_CONFIG, "spark.driver.memory": "1g"}, jobmanagers=2,
                      working_dir=str(tmp_path_factory.mktemp("lab-ha"))) as cluster:
        yield cluster


@pytest.fixture(scope="module")
def lab(tmp_path_factory, ha_cluster, built_extension):
    with JupyterLabServer(tmp_path_factory.mktemp("graph-lab"), lab_environment(ha_cluster)) as server:
        notebook = nbformat.v4.new_notebook()
        notebook.cells = [nbformat.v4.new_code_cell("%load_ext kernel_magics"),
                          nbformat.v4.new_code_cell(f"%%flink --name {JOB} --parallelism 1 --checkpoint-interval 2s\n"
                                                    + SLOW_CELL_BODY)]
        notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
        nbformat.write(notebook, str(server.root / "graph.ipynb"))
        yield server


@pytest.fixture(scope="module")
def page(tmp_path_factory, lab):
    with chromium_context(tmp_path_factory.mktemp("graph-profile")) as context:
        page = context.new_page()
        page.set_default_timeout(60_000)
        page.on("console", lambda m: m.type == "error" and CONSOLE_ERRORS.append(m.text))
        page.on("pageerror", lambda err: CONSOLE_ERRORS.append(str(err)))
        page.goto(f"{lab.url}/lab/tree/graph.ipynb?token={lab.token}")  # every test starts on the notebook
        page.locator(".jp-NotebookPanel .jp-Notebook-ExecutionIndicator[data-status='idle']").wait_for(
            timeout=START_TIMEOUT_MS)
        yield page


@pytest.fixture(autouse=True)
def screenshot_on_failure(request):
    yield
    report = getattr(request.node, "report_call", None)
    if report is not None and report.failed and "page" in request.fixturenames:
        screenshot(request.getfixturevalue("page"), f"FAILED-{request.node.name}")
        print("browser console errors:", *CONSOLE_ERRORS[-20:], sep="\n  ")  # e.g. BokehJS refusing a change


@pytest.fixture(scope="module")
def slow_job(page, lab, ha_cluster):
    """Run the notebook; the %%flink cell's job, once every subtask runs. Cancelled at the end."""
    def kernel_connected() -> bool:
        status, kernels = lab.json("GET", "/api/kernels")  # an error answer is a dict: not yet
        return status == 200 and any(k["connections"] and k["execution_state"] == "idle" for k in kernels)

    wait_until(kernel_connected, 120, "the notebook's kernel connected")
    page.get_by_role("menuitem", name="Run", exact=True).click()
    page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
    client = ha_cluster.client
    job = wait_until(lambda: next((j for j in client.jobs() if j["name"] == JOB), None), 120, "the cell's job submitted")
    wait_until(lambda: {s["status"] for v in client.get(f"/jobs/{job['jid']}")["vertices"] for s in v["subtasks"]}
               == {"RUNNING"}, 180, "every subtask running")
    yield job["jid"]
    try:
        if job_state(client, job["jid"]) not in ("CANCELED", "FAILED", "FINISHED"):
            client.patch(f"/jobs/{job['jid']}?mode=cancel")
    except ClusterError as err:  # a new leader knows only the jobs it resumed; this one ended before
        if err.status != 404:
            raise


def test_notebook_graph_turns_busy_and_names_the_bottleneck(page, ha_cluster, slow_job):
    output = page.locator(".jp-CodeCell").nth(1)  # the %%flink cell, its live view under it
    expected_nodes, expected_edges = expected_graph(ha_cluster.client, slow_job)
    assert len(expected_nodes) == 3, "source, slow map, window + collect: three chained tasks"
    wait_until(lambda: len(drawn_graph(output)[0]) == 3, 120, "the graph drawn under the cell")
    nodes, edges = drawn_graph(output)
    assert set(nodes) == set(expected_nodes) and edges == expected_edges
    slow_id = slow_node_id(expected_nodes)
    node = wait_for_bottleneck(lambda: drawn_graph(output)[0], slow_id)
    header = output.locator(".flinkbench-bottleneck")
    header.wait_for(timeout=60_000)
    assert "Slow map" in header.inner_text() and "limits this job" in header.inner_text()
    figure = output.locator(".flinkbench-graph-figure").first
    box = [float(node[k]) for k in ("x", "y", "width", "height")]
    wait_until(lambda: is_busy_red(painted(figure.screenshot(), *box)), 30, "the slow map painted busy under the cell")
    screenshot(page, "notebook-job-graph")


def job_row(panel, job_id: str, state: str | None = None):
    return panel.locator(f'.jp-Flinkbench-job[data-job-id="{job_id}"]' + (f'[data-state="{state}"]' if state else ""))


def panel_nodes(detail) -> dict[str, dict]:
    groups = detail.locator("g.jp-Flinkbench-node")
    out = {}
    for i in range(groups.count()):
        g = groups.nth(i)
        rect = g.locator("rect")
        out[g.get_attribute("data-node-id")] = {"busy": g.get_attribute("data-busy"), "fill": rect.get_attribute("fill"),
                                                 "x": rect.get_attribute("x"), "y": rect.get_attribute("y")}
    return out


def test_panel_draws_the_same_graph_and_names_the_bottleneck(page, ha_cluster, slow_job):
    panel = open_panel(page)
    job_row(panel, slow_job, "RUNNING").wait_for(timeout=START_TIMEOUT_MS)
    job_row(panel, slow_job).click()
    detail = panel.locator(f'.jp-Flinkbench-jobDetail[data-job-id="{slow_job}"]')
    graph = detail.locator(".jp-Flinkbench-jobGraph")
    graph.wait_for()
    expected_nodes, expected_edges = expected_graph(ha_cluster.client, slow_job)
    wait_until(lambda: set(panel_nodes(graph)) == set(expected_nodes), 60, "one SVG node per chained task")
    edges = graph.locator("g.jp-Flinkbench-edge")
    drawn_edges = {(*edges.nth(i).get_attribute("data-edge").split("->"), edges.nth(i).get_attribute("data-kind"))
                   for i in range(edges.count())}
    assert drawn_edges == expected_edges
    slow_id = slow_node_id(expected_nodes)
    wait_until(lambda: float(panel_nodes(graph)[slow_id]["busy"]) >= 0.75, 120, "the slow map busy in the panel")
    wait_until(lambda: graph.get_attribute("data-bottleneck") == slow_id, 60, "the panel's bottleneck is the slow map")
    hint = graph.locator(".jp-Flinkbench-bottleneck")
    assert "Slow map" in hint.inner_text() and "limits this job" in hint.inner_text()
    fill = panel_nodes(graph)[slow_id]["fill"]
    assert is_busy_red(tuple(int(fill[i:i + 2], 16) for i in (1, 3, 5))), fill
    notebook_nodes = drawn_graph(page.locator(".jp-CodeCell").nth(1))[0]
    same = {vid: (float(n["x"]), float(n["y"])) for vid, n in panel_nodes(graph).items()}
    assert same == {vid: (float(n["x"]), float(n["y"])) for vid, n in notebook_nodes.items()}, "the same layout"
    graph.locator(f'g.jp-Flinkbench-node[data-node-id="{slow_id}"]').click()
    assert graph.locator(f'.jp-Flinkbench-graphSubtasks[data-node-id="{slow_id}"] tbody tr').count() == 1
    screenshot(page, "panel-job-graph")


def test_panel_stops_the_job_with_a_savepoint(page, ha_cluster, slow_job):
    panel = open_panel(page)
    detail = panel.locator(f'.jp-Flinkbench-jobDetail[data-job-id="{slow_job}"]')
    detail.get_by_role("button", name="Stop with savepoint", exact=True).click()
    confirm_dialog(page)
    job_row(panel, slow_job, "FINISHED").wait_for(timeout=120_000)
    detail.locator('.jp-Flinkbench-checkpoints tr[data-kind="savepoint"][data-status="COMPLETED"]').wait_for()
    assert job_state(ha_cluster.client, slow_job) == "FINISHED"
    screenshot(page, "panel-stopped-with-savepoint")


def test_panel_kills_the_leader_and_follows_the_new_one(page, ha_cluster):
    panel = open_panel(page)
    leader = panel.locator('.jp-Flinkbench-jobmanagers li[data-role="leader"]')
    leader.wait_for()
    old = ha_cluster.leader_url()
    assert panel.locator(".jp-Flinkbench-jobmanagers li").count() == 2, "leader and standby listed"
    leader.get_by_role("button", name="kill").click()
    confirm_dialog(page)
    wait_until(lambda: ha_cluster.leader_url() not in (None, old), 60, "a standby to take over")
    new = ha_cluster.leader_url()
    wait_until(lambda: new in panel.locator('.jp-Flinkbench-jobmanagers li[data-role="leader"]').inner_text(), 90,
               "the panel to follow the new leader")
    panel.locator('.jp-Flinkbench-connection[data-link="live"]').wait_for(timeout=60_000)
    screenshot(page, "panel-leader-killed")


def test_panel_starts_and_stops_a_local_cluster(page, lab):
    panel = open_panel(page)
    panel.get_by_role("button", name="Start local cluster").click()
    dialog = page.locator(".jp-Dialog")
    dialog.locator('input[name="taskmanagers"]').fill("1")
    dialog.locator('input[name="slots"]').fill("1")
    confirm_dialog(page)
    stop = panel.get_by_role("button", name="Stop local cluster")
    stop.wait_for(timeout=180_000)
    wait_until(lambda: panel.locator('.jp-Flinkbench-tm[data-state="REGISTERED"]').count() == 1, 120,
               "the local cluster's one TaskManager in the panel")
    status = lab.json("GET", "/flinkbench/local-cluster")[1]
    assert status["state"] == "running" and status["url"] in panel.locator(".jp-Flinkbench-connection").inner_text()
    screenshot(page, "panel-local-cluster")
    stop.click()
    confirm_dialog(page)
    panel.get_by_role("button", name="Start local cluster").wait_for(timeout=120_000)
    assert lab.json("GET", "/flinkbench/local-cluster")[1]["state"] == "stopped"
    wait_until(lambda: panel.locator('.jp-Flinkbench-tm[data-state="REGISTERED"]').count() == 2, 120,
               "the panel back on the HA cluster and its two TaskManagers")
    screenshot(page, "panel-local-cluster-stopped")
