"""The Flinkbench side panel and "Submit cell as job" in a real JupyterLab, in headless Chromium, against
a real local cluster of 2 TaskManagers x 2 slots. Screenshots go to test-output/ui/."""
from __future__ import annotations

import json
import subprocess
import sys

import nbformat
import pytest

from tests.helpers.clusters import FAST_FAILURE_CONFIG, job_state, started_cluster, wait_until
from tests.ui.browser import chromium_context, chromium_missing_reason, confirm_dialog, open_panel, screenshot
from tests.ui.conftest import lab_environment
from tests.helpers.ports import free_port
from tests.ui.jupyter import JupyterLabServer

pytestmark = [pytest.mark.ui, pytest.mark.slow,
              pytest.mark.skipif(chromium_missing_reason() is not None, reason=chromium_missing_reason() or "")]

JOB_START_TIMEOUT_MS = 180_000
UI_TIMEOUT_MS = 60_000

STREAMING_CELL = """\
events = env.datagen("seq BIGINT, user INT", rows_per_second=500, fields={"seq": {"kind": "sequence"}})
events.filter(col("seq") % 2 == 0).collect()
"""


def flink_cell_magic_missing() -> str | None:
    """Why a notebook cannot run `%%flink` here, or None when kernel_magics provides it."""
    probe = ("from IPython.testing.globalipapp import start_ipython\n"
             "ip = start_ipython()\n"
             "ip.extension_manager.load_extension('kernel_magics')\n"
             "print('flink' in ip.magics_manager.magics['cell'])\n")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    if result.returncode != 0 or result.stdout.strip().splitlines()[-1:] != ["True"]:
        return "kernel_magics has no %%flink cell magic yet (needed to submit cells)"
    return None


@pytest.fixture(scope="module")
def ui_cluster(tmp_path_factory):
    with started_cluster(tmp_path_factory.mktemp("ui-cluster"), taskmanagers=2, slots=2,
                         config=FAST_FAILURE_CONFIG) as cluster:
        yield cluster


@pytest.fixture(scope="module")
def lab(tmp_path_factory, ui_cluster, built_extension):
    with JupyterLabServer(tmp_path_factory.mktemp("ui-lab"), lab_environment(ui_cluster)) as server:
        notebook = nbformat.v4.new_notebook()
        notebook.cells = [nbformat.v4.new_code_cell(STREAMING_CELL), nbformat.v4.new_code_cell("%load_ext kernel_magics"),
                          nbformat.v4.new_code_cell("%%flink --name ui-magic-cell\n" + STREAMING_CELL)]
        notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
        nbformat.write(notebook, str(server.root / "jobs.ipynb"))
        yield server


@pytest.fixture(scope="module")
def page(tmp_path_factory, lab):
    with chromium_context(tmp_path_factory.mktemp("chromium-profile")) as context:
        page = context.new_page()
        page.set_default_timeout(UI_TIMEOUT_MS)
        page.goto(f"{lab.url}/lab?token={lab.token}")
        page.wait_for_selector("#jp-main-dock-panel")
        yield page


@pytest.fixture(autouse=True)
def screenshot_on_failure(request):
    yield
    report = getattr(request.node, "report_call", None)
    if report is not None and report.failed and "page" in request.fixturenames:
        screenshot(request.getfixturevalue("page"), f"FAILED-{request.node.name}")


def job_row(page, name: str, state: str | None = None):
    selector = f'#flinkbench-panel .jp-Flinkbench-job[data-job-name="{name}"]'
    return page.locator(selector + (f'[data-state="{state}"]' if state else ""))


def test_extension_is_installed_and_enabled(built_extension):
    listing = subprocess.run([sys.executable, "-m", "jupyter", "labextension", "list"], capture_output=True, text=True)
    assert "flinkbench-jupyterlab" in listing.stdout + listing.stderr
    line = next(ln for ln in (listing.stdout + listing.stderr).splitlines() if "flinkbench-jupyterlab" in ln)
    assert "enabled" in line and "OK" in line
    servers = subprocess.run([sys.executable, "-m", "jupyter", "server", "extension", "list"],
                             capture_output=True, text=True)
    assert any("kernel_magics.server" in ln and "enabled" in ln for ln in (servers.stdout + servers.stderr).splitlines())


def test_panel_shows_taskmanagers_and_slots(page, ui_cluster):
    panel = open_panel(page)
    panel.locator('.jp-Flinkbench-connection[data-link="live"]').wait_for()
    tms = panel.locator('.jp-Flinkbench-tm[data-state="REGISTERED"]')
    wait_until(lambda: tms.count() == 2, 30, "two TaskManagers in the panel")
    assert panel.locator(".jp-Flinkbench-slot").count() == 4
    ids = {tm["id"] for tm in ui_cluster.client.get("/taskmanagers")["taskmanagers"]}
    assert {tms.nth(i).get_attribute("data-tm-id") for i in range(2)} == ids
    assert panel.locator('.jp-Flinkbench-jobmanagers li[data-role="leader"]').count() == 1
    screenshot(page, "panel-cluster")


def open_notebook(page, lab):
    if "jobs.ipynb" not in page.url:
        page.goto(f"{lab.url}/lab/tree/jobs.ipynb")
    notebook = page.locator(".jp-NotebookPanel")
    notebook.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']").wait_for(timeout=JOB_START_TIMEOUT_MS)
    return notebook


def running_job(page, cluster, name: str) -> str:
    """Wait until the panel shows the job RUNNING and every subtask runs (its TaskManager's Spark
    session is up); returns the job id. Tests cancel only jobs past this point: a task cancelled while
    its TaskManager's Spark session is still starting can take later tasks on that TaskManager down."""
    job_row(page, name, "RUNNING").wait_for(timeout=JOB_START_TIMEOUT_MS)
    job_id = job_row(page, name).get_attribute("data-job-id")
    def subtasks() -> list[str]:
        return [s["status"] for v in cluster.client.get(f"/jobs/{job_id}")["vertices"] for s in v["subtasks"]]
    wait_until(lambda: set(subtasks()) == {"RUNNING"}, JOB_START_TIMEOUT_MS / 1000, f"every subtask of {name} running")
    return job_id


def cancel_quietly(cluster, job_id: str | None) -> None:
    """End the job and wait until its slots are free, so the next test starts on an idle cluster."""
    if not job_id:
        return
    if job_state(cluster.client, job_id) not in ("CANCELED", "FAILED", "FINISHED"):
        cluster.client.patch(f"/jobs/{job_id}?mode=cancel")
    wait_until(lambda: job_state(cluster.client, job_id) in ("CANCELED", "FAILED", "FINISHED"), 60, f"{job_id} to end")
    wait_until(lambda: not any(slot.get("job-id") == job_id for tm in cluster.client.get("/taskmanagers")["taskmanagers"]
                               for slot in tm["slots"]), 30, f"the slots of {job_id} to be freed")


def test_toolbar_button_submits_a_plain_cell_as_a_running_job(page, lab, ui_cluster):
    missing = flink_cell_magic_missing()
    if missing:
        pytest.skip(missing)
    notebook = open_notebook(page, lab)
    first_cell = notebook.locator(".jp-CodeCell").first
    first_cell.locator(".jp-InputPrompt").click()
    notebook.locator('.jp-Toolbar [data-command="flinkbench:submit-cell"]').click()
    dialog = page.locator(".jp-Dialog")
    dialog.locator('input[name="name"]').fill("ui-toolbar-cell")
    dialog.locator('input[name="parallelism"]').fill("2")
    dialog.locator('input[name="checkpointInterval"]').fill("")
    confirm_dialog(page)
    panel = open_panel(page)
    job_id = None
    try:
        job_id = running_job(page, ui_cluster, "ui-toolbar-cell")
        assert job_row(page, "ui-toolbar-cell").locator("button.jp-Flinkbench-link").count() == 1, "links to its cell"
        first_cell.locator(".jp-OutputArea-output .jupyter-widgets").first.wait_for()  # the live view, as a widget
        wait_until(lambda: panel.locator(f'.jp-Flinkbench-slot[data-job-id="{job_id}"]').count() == 2, 30,
                   "the job's two slots shown busy")
        screenshot(page, "submitted-cell-running")
    finally:
        cancel_quietly(ui_cluster, job_id)


def test_flink_cell_job_appears_with_live_progress(page, lab, ui_cluster):
    missing = flink_cell_magic_missing()
    if missing:
        pytest.skip(missing)
    notebook = open_notebook(page, lab)
    notebook.locator(".jp-CodeCell").nth(1).locator(".jp-InputPrompt").click()
    page.keyboard.press("Shift+Enter")  # loads the magics (the toolbar's submit does too, when it runs first)
    page.keyboard.press("Shift+Enter")  # the %%flink cell
    open_panel(page)
    job_id = None
    try:
        job_id = running_job(page, ui_cluster, "ui-magic-cell")
        rate = job_row(page, "ui-magic-cell").locator('[data-field="rate"]')
        try:
            wait_until(lambda: rate.inner_text() not in ("0/s", "-"), 90, "a live record rate in the panel")
        except AssertionError as err:
            raise AssertionError(f"{err}; the JobManager reports {ui_cluster.client.get(f'/jobs/{job_id}')}") from None
        screenshot(page, "flink-cell-live")
    finally:
        cancel_quietly(ui_cluster, job_id)


def test_cancel_from_the_panel_cancels_the_job(page, ui_cluster):
    env = ui_cluster.environment()
    env.datagen("seq BIGINT", rows_per_second=200, fields={"seq": {"kind": "sequence"}}).blackhole()
    job = env.execute_async("ui-cancel-me")
    try:
        panel = open_panel(page)
        running_job(page, ui_cluster, "ui-cancel-me")
        job_row(page, "ui-cancel-me").click()
        detail = panel.locator(f'.jp-Flinkbench-jobDetail[data-job-id="{job.job_id}"]')
        detail.locator(".jp-Flinkbench-subtasks tbody tr").first.wait_for()
        assert "Source: datagen" in detail.locator(".jp-Flinkbench-graph").inner_text()
        detail.get_by_role("button", name="Savepoint", exact=True).click()
        confirm_dialog(page)
        detail.locator('.jp-Flinkbench-checkpoints tr[data-kind="savepoint"][data-status="COMPLETED"]').wait_for()
        screenshot(page, "job-detail-savepoint")
        job_row(page, "ui-cancel-me").locator('button[data-action="cancel"]').click()
        confirm_dialog(page)
        job_row(page, "ui-cancel-me", "CANCELED").wait_for()
        assert job.status() == "CANCELED"
        wait_until(lambda: panel.locator(f'.jp-Flinkbench-slot[data-job-id="{job.job_id}"]').count() == 0, 30,
                   "the cancelled job's slot to be freed in the panel")
        screenshot(page, "job-cancelled")
    finally:
        cancel_quietly(ui_cluster, job.job_id)


def test_submit_command_is_in_the_context_menu_palette_and_shortcuts(page, lab):
    notebook = open_notebook(page, lab)
    notebook.locator(".jp-CodeCell").first.locator(".jp-InputArea-editor").click(button="right")
    item = page.locator('.lm-Menu li[data-command="flinkbench:submit-cell"]')
    item.wait_for()
    assert "Submit cell as job" in item.inner_text()
    page.keyboard.press("Escape")
    page.keyboard.press("Control+Shift+C")
    page.locator(".lm-CommandPalette-input").fill("Submit cell as job")
    entry = page.locator('.lm-CommandPalette-item[data-command="flinkbench:submit-cell"]')
    entry.wait_for()
    assert "Alt+Shift+Enter" in entry.inner_text().replace(" ", "")
    page.keyboard.press("Escape")


def test_unreachable_jobmanager_is_shown_and_reconnect_works(page, ui_cluster):
    panel = open_panel(page)
    dead = f"http://127.0.0.1:{free_port()}"

    def connect_to(url):
        panel.get_by_role("button", name="Connect…").click()
        dialog = page.locator(".jp-Dialog")
        dialog.locator('input[name="url"]').fill(url)
        dialog.locator('input[name="token_file"]').fill(ui_cluster.token_file)
        confirm_dialog(page)

    connect_to(dead)
    banner = panel.locator('.jp-Flinkbench-connection[data-link="unreachable"]')
    banner.wait_for()
    assert "JobManager unreachable" in banner.inner_text() and dead in banner.inner_text()
    screenshot(page, "jobmanager-unreachable")
    connect_to(ui_cluster.url)
    panel.locator('.jp-Flinkbench-connection[data-link="live"]').wait_for()
    assert panel.locator('.jp-Flinkbench-tm[data-state="REGISTERED"]').count() == 2


def test_killed_taskmanager_shows_as_lost(page, ui_cluster):
    panel = open_panel(page)
    victim = panel.locator('.jp-Flinkbench-tm[data-state="REGISTERED"]').first
    tm_id = victim.get_attribute("data-tm-id")
    victim.locator("button.jp-mod-danger").click()
    confirm_dialog(page)
    lost = panel.locator(f'.jp-Flinkbench-tm[data-tm-id="{tm_id}"][data-state="LOST"]')
    lost.wait_for()
    assert lost.locator('.jp-Flinkbench-slot[data-state="lost"]').count() == 2
    states = {tm["id"]: tm["state"] for tm in ui_cluster.client.get("/taskmanagers")["taskmanagers"]}
    assert states[tm_id] == "LOST"
    screenshot(page, "taskmanager-lost")
    assert json.dumps(states).count("REGISTERED") == 1
