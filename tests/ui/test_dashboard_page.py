"""The JobManager's dashboard in headless Chromium: its login page without the token, drawn with it."""
from __future__ import annotations

import pytest

from tests.ui.browser import chromium_context, chromium_missing_reason, screenshot

pytestmark = [pytest.mark.ui, pytest.mark.skipif(chromium_missing_reason() is not None,
                                                 reason=chromium_missing_reason() or "")]


def test_dashboard_page_shows_how_to_log_in_without_token_and_draws_the_cluster_with_it(cluster, tmp_path):
    with chromium_context(tmp_path / "profile") as context:
        page = context.new_page()
        page.goto(f"{cluster.url}/dashboard?page=jobs")
        assert page.url == f"{cluster.url}/dashboard/login?next=%2Fdashboard%3Fpage%3Djobs", page.url
        page.get_by_text("Flinkbench panel").first.wait_for()
        assert "%flink local" in page.content() and cluster.token not in page.content()
        screenshot(page, "dashboard-login")

        page.goto(f"{cluster.url}/dashboard?token={cluster.token}")
        page.locator("canvas").first.wait_for(timeout=60_000)
        status = page.get_by_text("slots free")
        status.wait_for(timeout=60_000)
        assert "2 TaskManagers" in status.inner_text()
        assert screenshot(page, "dashboard-slots").stat().st_size > 10_000
        page.get_by_text("Failover").first.click()
        page.get_by_text("JobManagers").first.wait_for(timeout=30_000)
        assert page.get_by_text(cluster.url).first.is_visible(), "the leader is listed"
        screenshot(page, "dashboard-failover")

        page.goto(f"{cluster.url}/dashboard")  # the cookie set by ?token= lets the page back in
        page.locator("canvas").first.wait_for(timeout=60_000)
