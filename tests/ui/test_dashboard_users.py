"""The teacher's view in headless Chromium, on the shared cluster: the admin's Users page lists two students'
jobs with their slots, and cancels one of them after confirming; a student's dashboard lists their own job
only and shows the Users page's refusal; on a cluster of its own, the Users page kills a TaskManager after
confirming. Screenshots go to test-output/ui/dashboard-users-*.png."""
from __future__ import annotations

import secrets

import pytest

from runtime.api.environment import StreamExecutionEnvironment
from runtime.client import RestClient
from tests.helpers.clusters import job_state, wait_until
from tests.integration.test_cluster_core import seq_source
from tests.ui.browser import chromium_context, chromium_missing_reason, screenshot

pytestmark = [pytest.mark.ui, pytest.mark.slow,
              pytest.mark.skipif(chromium_missing_reason() is not None, reason=chromium_missing_reason() or "")]


def students_job(cluster, token: str, name: str):
    env = StreamExecutionEnvironment(RestClient(cluster.url, token=token))
    env.set_parallelism(1)
    seq_source(env, rows=None, rows_per_second=50).blackhole()
    job = env.execute_async(name)
    wait_until(lambda: job_state(cluster.client, job.job_id) == "RUNNING", 180, f"{name} running")
    return job


def test_the_teacher_sees_every_students_jobs_and_cancels_one_and_a_student_sees_their_own(cluster, tmp_path):
    suffix = secrets.token_hex(3)
    names = [f"ivy-{suffix}", f"jack-{suffix}"]
    tokens = [cluster.client.post("/users", {"name": n, "slots": 2})["token"] for n in names]
    jobs = [students_job(cluster, t, f"{n}'s job") for n, t in zip(names, tokens)]
    try:
        with chromium_context(tmp_path / "teacher") as teacher:
            check_teacher(teacher.new_page(), cluster, names, jobs)
        with chromium_context(tmp_path / "student") as student:  # a browser of their own: their cookie, not the teacher's
            check_student(student.new_page(), cluster, tokens[1], jobs)
    finally:
        for job in jobs:
            if job_state(cluster.client, job.job_id) not in ("CANCELED", "FAILED", "FINISHED"):
                cluster.client.patch(f"/jobs/{job.job_id}?mode=cancel")
        for name in names:
            cluster.client.request("DELETE", f"/users/{name}")


def check_teacher(page, cluster, names, jobs):
    page.set_default_timeout(60_000)
    page.goto(f"{cluster.url}/dashboard?token={cluster.token}&page=users")
    table = page.locator("table[data-name='users']")
    for name in names:
        table.locator(f"text={name}'s job").wait_for()
        row = table.locator("tr", has_text=f"{name}'s job")
        assert "RUNNING" in row.inner_text() and name in table.inner_text()
    screenshot(page, "dashboard-users")
    choice = page.get_by_role("combobox").first  # the Job choice, above the TaskManager's
    wait_until(lambda: any(jobs[0].job_id in o for o in choice.locator("option").all_inner_texts()), 30,
               "the job among the choices")
    choice.select_option(next(o for o in choice.locator("option").all_inner_texts() if jobs[0].job_id in o))
    page.get_by_role("button", name="Cancel job").click()
    assert jobs[0].job_id in page.locator("[data-action='cancel']").inner_text()
    screenshot(page, "dashboard-users-confirm")
    page.get_by_role("button", name="Confirm").click()
    page.locator("[data-outcome='done']").wait_for()
    wait_until(lambda: job_state(cluster.client, jobs[0].job_id) == "CANCELED", 60, "the chosen job cancelled")
    assert job_state(cluster.client, jobs[1].job_id) == "RUNNING"
    table.locator("tr", has_text=f"{names[0]}'s job").locator("[data-state='CANCELED']").wait_for()
    screenshot(page, "dashboard-users-cancelled")


def check_student(page, cluster, token, jobs):
    page.set_default_timeout(60_000)
    page.goto(f"{cluster.url}/dashboard?token={token}&page=jobs")
    listed = page.locator("table[data-name='jobs']")
    listed.locator(f"text={jobs[1].job_id}").wait_for()
    assert jobs[0].job_id not in listed.inner_text()
    screenshot(page, "dashboard-users-student-jobs")
    page.goto(f"{cluster.url}/dashboard?page=users")
    refusal = page.locator(".fb-error")
    refusal.wait_for()
    assert "403" in refusal.inner_text() and "for admins" in refusal.inner_text()
    screenshot(page, "dashboard-users-student-refused")


def test_the_teacher_kills_a_taskmanager_from_the_users_page(fresh_cluster, tmp_path):
    """On a cluster of its own (it loses a TaskManager): the kill is confirmed first, then the TaskManager is lost."""
    cluster = fresh_cluster(taskmanagers=2, slots=1)
    victim = cluster.client.get("/taskmanagers")["taskmanagers"][0]["id"]
    with chromium_context(tmp_path / "teacher") as context:
        page = context.new_page()
        page.set_default_timeout(60_000)
        page.goto(f"{cluster.url}/dashboard?token={cluster.token}&page=users")
        choice = page.get_by_role("combobox").nth(1)  # the TaskManager choice, under the job's
        wait_until(lambda: any(victim in o for o in choice.locator("option").all_inner_texts()), 30,
                   "the TaskManager among the choices")
        choice.select_option(next(o for o in choice.locator("option").all_inner_texts() if victim in o))
        page.get_by_role("button", name="Kill TaskManager").click()
        assert victim in page.locator("[data-action='kill']").inner_text()
        assert all(tm["state"] == "REGISTERED" for tm in cluster.client.get("/taskmanagers")["taskmanagers"]), \
            "nothing happens before the confirmation"
        page.get_by_role("button", name="Confirm").click()
        page.locator("[data-outcome='done']").wait_for()
        screenshot(page, "dashboard-users-killed")
    wait_until(lambda: cluster.client.get(f"/taskmanagers/{victim}")["state"] == "LOST", 60, "the TaskManager lost")
