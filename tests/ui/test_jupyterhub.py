"""A class on one cluster behind a real JupyterHub (dummy authenticator, local-process spawner, the npm proxy),
driven in headless Chromium: three students log in; the hub's hook (kernel_magics.hub) makes each a user of the
shared cluster with a quota of one slot and hands their server its token, so '%flink connect' with no arguments
finds the class cluster. Each runs a '%%flink' cell and sees only their own job in the panel and the dashboard;
one student's REST cancel of another's job is 404; a job beyond the first student's quota is refused with the
quota's message while the others' jobs run on; the admin sees all three. Screenshots: test-output/ui/hub-*.png."""
from __future__ import annotations

import pytest

from runtime.client import ClusterError, RestClient
from tests.helpers.clusters import job_state, wait_until
from tests.helpers.hub import JupyterHub
from tests.ui.browser import chromium_context, chromium_missing_reason, open_panel, screenshot
from tests.ui.test_newcomer import run_cell

pytestmark = [pytest.mark.ui, pytest.mark.slow,
              pytest.mark.skipif(chromium_missing_reason() is not None, reason=chromium_missing_reason() or "")]

STUDENTS = ("ann", "ben", "cat")
START_MS = 240_000
CELL = """%%flink --name {name} --parallelism 1
env.datagen("seq BIGINT", rows_per_second=20, fields={{"seq": {{"kind": "sequence"}}}}).blackhole()"""


@pytest.fixture
def hub(cluster, tmp_path):
    with JupyterHub(tmp_path / "hub", cluster.url, cluster.token_file, slots=1) as running:
        yield running


def test_three_students_share_one_cluster_behind_jupyterhub(hub, cluster, tmp_path):
    jobs: dict[str, str] = {}
    try:
        for student in STUDENTS:
            with chromium_context(tmp_path / f"browser-{student}") as context:
                page = context.new_page()
                try:
                    jobs[student] = student_session(page, hub, cluster, student, jobs)
                except BaseException:
                    screenshot(page, f"FAILED-hub-{student}")
                    raise
        check_isolation_and_quota(hub, cluster, jobs, tmp_path)
        with chromium_context(tmp_path / "browser-teacher") as context:
            teacher_sees_all(context.new_page(), cluster, jobs)
    finally:
        for job_id in jobs.values():
            if job_state(cluster.client, job_id) not in ("CANCELED", "FAILED", "FINISHED"):
                cluster.client.patch(f"/jobs/{job_id}?mode=cancel")
        for student in STUDENTS:
            try:
                cluster.client.request("DELETE", f"/users/{student}")
            except ClusterError:
                pass


def student_session(page, hub, cluster, student: str, earlier: dict[str, str]) -> str:
    """Log in, open a notebook, connect with no arguments, run a %%flink cell; the panel and the dashboard show
    this student's job and none of the others'. Returns the job's id."""
    page.set_default_timeout(START_MS)
    page.goto(f"{hub.url}/hub/login")
    page.locator("#username_input").fill(student)
    page.locator("#login_submit").click()
    page.locator("#jp-main-dock-panel").wait_for(timeout=START_MS)
    page.locator('.jp-Launcher:visible .jp-LauncherCard[data-category="Notebook"]').first.click()
    notebook = page.locator(".jp-NotebookPanel:visible")
    notebook.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']").wait_for(timeout=START_MS)
    # JupyterLab sends a cell only once the page holds the kernel's channels: the status bar says Idle then.
    page.locator(".jp-StatusBar-Widget", has_text="| Idle").first.wait_for(timeout=START_MS)
    connected = run_cell(page, notebook, 0, "%load_ext kernel_magics\n%flink connect", "connected to")
    assert cluster.url in connected, connected
    run_cell(page, notebook, 1, CELL.format(name=f"{student}-job"))
    job_id = wait_until(lambda: next((j["jid"] for j in cluster.client.jobs() if j["name"] == f"{student}-job"
                                      and j["state"] == "RUNNING"), None), 180, f"{student}'s job running")
    panel = open_panel(page)
    panel.locator(f'.jp-Flinkbench-job[data-job-name="{student}-job"]').wait_for(timeout=60_000)
    for other in earlier:
        assert panel.locator(f'.jp-Flinkbench-job[data-job-name="{other}-job"]').count() == 0, f"{other}'s job shown"
    screenshot(page, f"hub-{student}-lab")
    if student == STUDENTS[0]:
        run_cell(page, notebook, 2, CELL.format(name=f"{student}-second-job"))
        output = notebook.locator(".jp-Cell").nth(2).locator(".jp-OutputArea")
        output.get_by_text("slot quota exceeded").first.wait_for(timeout=120_000)
        assert f"user '{student}' may hold 1 slot and holds 1 ('{student}-job' 1)" in output.inner_text()
        screenshot(page, f"hub-{student}-quota")
    dashboard = page.context.new_page()
    dashboard.goto(f"{cluster.url}/dashboard?token={hub.token_of(student)}&page=jobs")
    listed = dashboard.locator("table[data-name='jobs']")
    listed.locator(f"text={job_id}").wait_for(timeout=60_000)
    assert not [other for other in earlier.values() if other in listed.inner_text()]
    screenshot(dashboard, f"hub-{student}-dashboard")
    return job_id


def check_isolation_and_quota(hub, cluster, jobs: dict[str, str], tmp_path) -> None:
    ann = RestClient(cluster.url, token=hub.token_of("ann"))
    with pytest.raises(ClusterError) as refused:
        ann.patch(f"/jobs/{jobs['ben']}?mode=cancel")
    assert refused.value.status == 404 and str(refused.value) == f"Job {jobs['ben']} not found"
    assert [j["jid"] for j in ann.jobs()] == [jobs["ann"]]
    assert all(job_state(cluster.client, job_id) == "RUNNING" for job_id in jobs.values()), "the others run on"
    overview = {u["name"]: u for u in cluster.client.get("/users/overview")["users"]}
    for student in STUDENTS:
        assert [(j["jid"], j["state"]) for j in overview[student]["jobs"]] == [(jobs[student], "RUNNING")]
        assert overview[student]["slots"] == 1


def teacher_sees_all(page, cluster, jobs: dict[str, str]) -> None:
    """The teacher (the cluster token) on the dashboard's Users page: every student's job, RUNNING."""
    page.set_default_timeout(60_000)
    page.goto(f"{cluster.url}/dashboard?token={cluster.token}&page=users")
    table = page.locator("table[data-name='users']")
    for student in STUDENTS:
        row = table.locator("tr", has_text=f"{student}-job")
        row.locator("[data-state='RUNNING']").wait_for()
    screenshot(page, "hub-teacher-users")
