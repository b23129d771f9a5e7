"""The savepoint browser in each front, in headless Chromium against the shared cluster: a keyed job stopped
with a savepoint; the notebook lists it (``%flink savepoints``), shows its state and keys, checks a changed
cell against it (``%%flink --check-savepoint``: refused, one operator's state would be dropped) and the job that
took it (``%flink savepoints check --job``: fits); the side panel
lists it, opens it and checks it against the job that took it (fits); the dashboard does the same on its
Savepoints pages. Screenshots: test-output/ui/{notebook,panel,dashboard}-savepoints*.png."""
from __future__ import annotations

import re

import nbformat
import pytest

from tests.helpers import savepoint_jobs
from tests.helpers.clusters import wait_until
from tests.ui.browser import chromium_missing_reason, notebook_page, open_panel, run_all_cells, screenshot
from tests.ui.conftest import REPO, lab_environment
from tests.ui.jupyter import JupyterLabServer

pytestmark = [pytest.mark.ui, pytest.mark.slow,
              pytest.mark.skipif(chromium_missing_reason() is not None, reason=chromium_missing_reason() or "")]

ROWS = 30_000  # at 300 rows/s the input outlasts the first checkpoint however slow the first bundle
START_TIMEOUT_MS = 180_000
CHANGED_CELL = """from tests.helpers import savepoint_jobs  # the job of the savepoint, changed: v2 drops 'maxes'
savepoint_jobs.build(env, "v2", 4000, "OUT")"""


@pytest.fixture(scope="module")
def savepoint(cluster, tmp_path_factory) -> dict:
    """v1 of the keyed job, stopped with a savepoint into the cluster's savepoint directory: its listing."""
    folder = tmp_path_factory.mktemp("savepoint-fronts")
    _, path = savepoint_jobs.stopped_with_savepoint(cluster, "fronts v1", ROWS, str(folder / "out"), 300)
    return next(s for s in cluster.client.get("/savepoints")["savepoints"] if s["path"] == path)


@pytest.fixture(scope="module")
def lab(tmp_path_factory, cluster, built_extension, savepoint):
    environment = {**lab_environment(cluster), "PYTHONPATH": str(REPO)}  # the cell imports the test's job
    with JupyterLabServer(tmp_path_factory.mktemp("savepoint-lab"), environment) as server:
        notebook = nbformat.v4.new_notebook()
        cell = CHANGED_CELL.replace("OUT", str(server.root / "changed-out"))
        notebook.cells = [nbformat.v4.new_code_cell("%load_ext kernel_magics"),
                          nbformat.v4.new_code_cell("%flink savepoints"),
                          nbformat.v4.new_code_cell(f"%flink savepoints show {savepoint['path']}"),
                          nbformat.v4.new_code_cell(f"%%flink --from-savepoint {savepoint['path']} --check-savepoint"
                                                    f" --parallelism 2\n{cell}"),
                          nbformat.v4.new_code_cell(f"%flink savepoints check {savepoint['path']} "
                                                    f"--job {savepoint['job-id'][:10]}")]
        notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
        nbformat.write(notebook, str(server.root / "savepoints.ipynb"))
        yield server


@pytest.fixture(scope="module")
def page(tmp_path_factory, lab):
    with notebook_page(tmp_path_factory.mktemp("savepoint-profile"), lab, "savepoints.ipynb", START_TIMEOUT_MS) as page:
        yield page


def test_the_notebook_lists_shows_and_checks_a_savepoint(page, lab, savepoint):
    run_all_cells(page, lab)
    cells = page.locator(".jp-CodeCell")
    cells.nth(1).locator("table.flinkbench-savepoints").wait_for(timeout=START_TIMEOUT_MS)
    assert savepoint["path"] in cells.nth(1).inner_text()
    state = cells.nth(2).locator("table.flinkbench-savepoint")
    state.wait_for()
    assert re.search(r"counts\s+keyed state\s+2\s+\S+ \S+\s+\d+\s+10", state.inner_text()), state.inner_text()
    fit = cells.nth(3).locator(".flinkbench-savepoint-fit")
    fit.wait_for(timeout=START_TIMEOUT_MS)
    report = cells.nth(3).inner_text()
    assert "refused as submitted" in fit.inner_text() and "maxes" in report and "--allowNonRestoredState" in report
    same_job = cells.nth(4).locator(".flinkbench-savepoint-fit")
    same_job.wait_for()
    assert "fits" in same_job.inner_text(), "against the job that took it"
    cells.nth(1).scroll_into_view_if_needed()
    screenshot(page, "notebook-savepoints")


def test_the_panel_opens_a_savepoint_and_checks_it_against_its_job(page, savepoint):
    panel = open_panel(page)
    panel.locator("[data-action='refresh-savepoints']").click()
    entry = panel.locator(f".jp-Flinkbench-savepoint[data-path='{savepoint['path']}']")
    entry.locator(".jp-Flinkbench-jobHead").click()
    keys = entry.locator("tr[data-operator='counts'] td[data-field='keys']")
    wait_until(lambda: keys.inner_text() == "10", 60, "the counts operator's keys")
    entry.locator("select[data-name='check-job']").select_option(savepoint["job-id"])
    entry.locator("button[data-action='check']").click()
    entry.locator(".jp-Flinkbench-fit[data-compatible='true']").wait_for()
    screenshot(page, "panel-savepoints")


def test_the_dashboard_lists_a_savepoint_and_checks_it(page, cluster, savepoint):
    page.goto(f"{cluster.url}/dashboard?token={cluster.token}&page=savepoints")
    listed = page.locator("table[data-name='savepoints']")
    wait_until(lambda: savepoint["path"] in listed.inner_text(), 60, "the savepoint listed")
    screenshot(page, "dashboard-savepoints")
    page.locator("table[data-name='savepoints'] a", has_text=savepoint["path"]).click()
    state = page.locator("table[data-name='savepoint-state']")
    wait_until(lambda: re.search(r"counts\s+keyed state\s+2\s+\S+ \S+\s+\d+\s+10", state.inner_text()), 60,
               "the counts operator's rows and keys")
    page.locator("button", has_text="Check").click()
    fit = page.locator("table[data-name='savepoint-fit']")
    wait_until(lambda: "fits" in fit.inner_text(), 60, "the check against the job that took it")
    screenshot(page, "dashboard-savepoint-details")
