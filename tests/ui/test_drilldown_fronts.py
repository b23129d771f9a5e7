"""A subtask's drill-down into its Spark stages in each front, in headless Chromium, on the shared cluster: the
notebook's ``%flink drilldown``, the side panel's job graph (a task, then one of its subtasks) and the dashboard's
subtask page (from a job's Subtasks tab) each list the source subtask's recent Spark stages slowest first with its
busy time in parts (stages, Spark's driver, transfer, the TaskManager's own work) and its phase times beside.
Screenshots ``*-drilldown.png`` go to test-output/ui/."""
from __future__ import annotations

import nbformat
import pytest

from tests.helpers.clusters import wait_until
from tests.ui.browser import chromium_missing_reason, notebook_page, open_panel, run_all_cells, screenshot
from tests.ui.conftest import lab_environment
from tests.ui.jupyter import JupyterLabServer

pytestmark = [pytest.mark.ui, pytest.mark.slow,
              pytest.mark.skipif(chromium_missing_reason() is not None, reason=chromium_missing_reason() or "")]

START_TIMEOUT_MS = 180_000


@pytest.fixture(scope="module")
def running(cluster) -> dict:
    """A paced job whose source subtasks have run Spark stages for a while: its id and its source task's id."""
    env = cluster.environment()
    env.set_parallelism(2)
    env.datagen("seq BIGINT", rows_per_second=400, fields={"seq": {"kind": "sequence"}}).with_columns(
        user="seq % 10").blackhole()
    job = env.execute_async("drill-down fronts")
    source = next(v["id"] for v in cluster.client.get(f"/jobs/{job.job_id}")["vertices"] if v["name"].startswith("Source"))
    wait_until(lambda: len(cluster.client.get(f"/jobs/{job.job_id}/vertices/{source}/subtasks/0/spark")["stages"]) >= 3,
               240, "three Spark stages of the source's first subtask")
    yield {"job": job.job_id, "source": source}
    job.cancel()


@pytest.fixture(scope="module")
def lab(tmp_path_factory, cluster, built_extension, running):
    with JupyterLabServer(tmp_path_factory.mktemp("drilldown-lab"), lab_environment(cluster)) as server:
        notebook = nbformat.v4.new_notebook()
        notebook.cells = [nbformat.v4.new_code_cell("%load_ext kernel_magics"),
                          nbformat.v4.new_code_cell(f"%flink drilldown {running['job'][:10]} --task Source --subtask 1"),
                          nbformat.v4.new_code_cell(f"%flink drilldown {running['job'][:10]}")]
        notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
        nbformat.write(notebook, str(server.root / "drilldown.ipynb"))
        yield server


@pytest.fixture(scope="module")
def page(tmp_path_factory, lab):
    with notebook_page(tmp_path_factory.mktemp("drilldown-profile"), lab, "drilldown.ipynb", START_TIMEOUT_MS) as page:
        yield page


def test_the_notebook_drills_into_a_subtask(page, lab):
    run_all_cells(page, lab)
    out = page.locator(".jp-CodeCell").nth(1)
    out.locator("table.flinkbench-drilldown-stages").wait_for(timeout=START_TIMEOUT_MS)
    assert "Source" in out.locator(".flinkbench-drilldown-summary").inner_text()
    assert "its busy time in parts: Spark stages" in out.locator(".flinkbench-drilldown-summary").inner_text()
    assert "spark_action" in out.locator("table.flinkbench-drilldown-phases").inner_text()
    assert out.locator("table.flinkbench-drilldown-stages tbody tr").count() >= 3
    chosen = page.locator(".jp-CodeCell").nth(2).locator(".flinkbench-drilldown-summary")
    chosen.wait_for()  # without --task: the busiest subtask of the hinted task, here of the only one
    assert "Source" in chosen.inner_text()
    screenshot(page, "notebook-drilldown")


def test_the_panels_graph_opens_a_subtask(page, running):
    panel = open_panel(page)
    panel.locator(f'.jp-Flinkbench-job[data-job-id="{running["job"]}"]').click()
    graph = panel.locator(f'.jp-Flinkbench-jobDetail[data-job-id="{running["job"]}"] .jp-Flinkbench-jobGraph')
    graph.locator(f'g.jp-Flinkbench-node[data-node-id="{running["source"]}"]').click()
    graph.locator(f'.jp-Flinkbench-graphSubtasks[data-node-id="{running["source"]}"] tr[data-subtask="0"]').click()
    drill = graph.locator(f'.jp-Flinkbench-drilldown[data-vertex="{running["source"]}"][data-subtask="0"]')
    rows = drill.locator(".jp-Flinkbench-drilldownStages tbody tr")
    wait_until(lambda: rows.count() >= 3, 60, "the subtask's stages in the panel")
    durations = [int(d) for d in rows.evaluate_all("rows => rows.map(r => r.dataset.duration)")]
    assert durations == sorted(durations, reverse=True), "slowest first"
    assert "spark_action" in drill.locator(".jp-Flinkbench-drilldownPhases").inner_text()
    assert "Spark's driver outside any stage" in drill.locator(".jp-Flinkbench-drilldownParts").inner_text()
    drill.scroll_into_view_if_needed()
    screenshot(page, "panel-drilldown")


def test_the_dashboard_opens_a_subtask_from_the_subtasks_tab(page, cluster, running):
    page.goto(f"{cluster.url}/dashboard?token={cluster.token}&job={running['job']}")
    page.locator(".bk-tab", has_text="Subtasks").first.click()  # Bokeh's tab headers
    page.locator(f"table[data-name='subtasks-{running['source']}'] a", has_text="stages").first.click()
    stages = page.locator("table.flinkbench-drilldown-stages")
    wait_until(lambda: stages.locator("tbody tr").count() >= 3, 60, "the subtask's stages on the dashboard")
    assert "Source" in page.locator(".flinkbench-drilldown-summary").inner_text()
    assert "the TaskManager's own work" in page.locator(".flinkbench-drilldown-summary").inner_text()
    assert "spark_action" in page.locator("table.flinkbench-drilldown-phases").inner_text()
    screenshot(page, "dashboard-drilldown")
