"""A %%flink cell's live view in real JupyterLab (headless Chromium): the Bokeh widget renders under the
cell and keeps changing while the job runs, and when the job ends its static copy appears beside it.
Screenshots go to test-output/ui/."""
from __future__ import annotations

import nbformat
import pytest

from tests.helpers.clusters import job_state, wait_until
from tests.ui.browser import chromium_context, chromium_missing_reason, screenshot
from tests.ui.conftest import lab_environment
from tests.ui.jupyter import JupyterLabServer

pytestmark = [pytest.mark.ui, pytest.mark.slow,
              pytest.mark.skipif(chromium_missing_reason() is not None, reason=chromium_missing_reason() or "")]

CELL = """%%flink --name widgets-in-lab --max-rows 8
env.datagen("seq BIGINT, user INT", rows_per_second=300, fields={"seq": {"kind": "sequence"}}).collect()
"""


def table_seqs(view) -> list[int]:
    """The seq column of the live results table as the page shows it (all 8 rows fit, none scrolled away)."""
    return [int(text) for text in view.locator(".slick-cell.l0").all_inner_texts() if text.strip().isdigit()]


def test_live_view_renders_and_changes_in_jupyterlab(cluster, tmp_path):
    with JupyterLabServer(tmp_path / "lab", lab_environment(cluster)) as lab:
        notebook = nbformat.v4.new_notebook()
        notebook.cells = [nbformat.v4.new_code_cell("%load_ext kernel_magics"), nbformat.v4.new_code_cell(CELL)]
        notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
        nbformat.write(notebook, str(lab.root / "live.ipynb"))
        job_id = None
        with chromium_context(tmp_path / "profile") as context:
            page = context.new_page()
            page.set_default_timeout(120_000)
            page.goto(f"{lab.url}/lab/tree/live.ipynb?token={lab.token}")
            panel = page.locator(".jp-NotebookPanel")
            panel.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']").wait_for()
            def kernel_connected():
                status, kernels = lab.json("GET", "/api/kernels")
                return status == 200 and any(k["connections"] and k["execution_state"] == "idle" for k in kernels)

            wait_until(kernel_connected, 120, "the notebook's kernel connected")
            page.get_by_role("menuitem", name="Run", exact=True).click()
            page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
            try:
                panel.locator(".jp-InputPrompt", has_text="[1]").first.wait_for(timeout=60_000)
                job = wait_until(lambda: next((j for j in cluster.client.jobs() if j["name"] == "widgets-in-lab"), None),
                                 120, "the cell's job submitted")
                job_id = job["jid"]
                output = panel.locator(".jp-CodeCell").nth(1).locator(".widget-vbox").first  # the live view
                output.locator("canvas").first.wait_for()
                output.get_by_text("RUNNING").first.wait_for(timeout=180_000)
                first = output.screenshot()
                wait_until(lambda: output.screenshot() != first, 120, "the live view to change as rows arrive")
                total = cluster.client.get(f"/jobs/{job_id}/results?offset=0&limit=0")["total"]
                wait_until(lambda: max(table_seqs(output), default=-1) >= total - 1, 60,
                           "the live table to show the newest rows")
                output.get_by_text("rows collected").first.wait_for()
                screenshot(page, "notebook-live-view")
                # Hidden tabs are not redrawn while the job runs: opening one has the kernel fill it.
                read = sum(s["metrics"]["records_in"] for s in cluster.client.get(f"/jobs/{job_id}")["vertices"][0]["subtasks"])
                output.get_by_text("Tasks", exact=True).first.click()
                records_in = output.locator(".slick-cell.l5:visible")  # the tasks table's "records in" column
                wait_until(lambda: records_in.count() and int(records_in.first.inner_text().replace(",", "")) >= read,
                           30, "the opened Tasks tab to show the records read so far")
                # Once the job ends, its view leaves a static copy beside the widget, figures drawn by the page.
                cluster.client.patch(f"/jobs/{job_id}?mode=cancel")
                copy = panel.locator(".jp-CodeCell").nth(1).locator(".flinkbench-static")
                copy.wait_for(timeout=120_000)
                assert copy.locator(".flinkbench-static-state").inner_text() == "CANCELED"
                copy.locator("[data-figure=graph] canvas").first.wait_for()
                assert copy.locator("table.flinkbench-static-results tbody tr").count() == 8, "the rows the table showed"
                assert output.locator("canvas").count() > 0, "the live widget stays, beside its copy"
                copy.scroll_into_view_if_needed()
                screenshot(page, "notebook-static-copy")
            except BaseException:
                screenshot(page, "FAILED-notebook-live-view")
                raise
            finally:
                if job_id and job_state(cluster.client, job_id) not in ("CANCELED", "FAILED", "FINISHED"):
                    cluster.client.patch(f"/jobs/{job_id}?mode=cancel")
                    wait_until(lambda: job_state(cluster.client, job_id) == "CANCELED", 60, "the job cancelled")
