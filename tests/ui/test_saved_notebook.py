"""A saved notebook read without a kernel or a cluster: the committed teaching notebook 04, converted to HTML by
nbconvert and opened in headless Chromium with every request off the machine refused, shows its job's static
copy: the results table, the job graph and the checkpoint timeline drawn by the embedded Bokeh figures, and the
restart. Screenshots go to test-output/ui/saved-notebook-*.png."""
from __future__ import annotations

import io
import re
import subprocess
import sys

import pytest

from tests.helpers.notebooks import REPO
from tests.ui.browser import SCREENSHOTS, chromium_context, chromium_missing_reason

pytestmark = [pytest.mark.ui, pytest.mark.slow]

NOTEBOOK = REPO / "notebooks" / "04-checkpoints-and-failures.ipynb"
NODE_FILL = (0x5D, 0xB1, 0xFF)  # an idle task's box (runtime.views.graph.IDLE_FILL)
COMPLETED = (0x2C, 0xA0, 0x2C)  # a completed checkpoint's bar (runtime.views.columns.STATE_COLORS)


def share_of(png: bytes, colour: tuple[int, int, int]) -> float:
    """The share of a screenshot's pixels that have ``colour``: whether a canvas drew what it should."""
    import numpy as np
    from PIL import Image

    pixels = np.asarray(Image.open(io.BytesIO(png)).convert("RGB"), dtype=int)
    return float((np.abs(pixels - np.array(colour)) <= 8).all(axis=2).mean())


def convert(tmp_path):
    out = tmp_path / "04.html"
    done = subprocess.run([sys.executable, "-m", "nbconvert", "--to", "html", "--output", str(out), str(NOTEBOOK)],
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]
    return out


def test_a_saved_notebook_shows_results_graph_and_checkpoints_without_a_kernel_or_cluster(tmp_path):
    missing = chromium_missing_reason()
    if missing:
        pytest.fail(missing)
    html = convert(tmp_path)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    with chromium_context(tmp_path / "profile") as context:
        page = context.new_page()
        page.set_default_timeout(60_000)
        refused: list[str] = []
        page.route(re.compile(r"^(?!file:).*"), lambda route: (refused.append(route.request.url), route.abort()))
        errors: list[str] = []
        page.on("pageerror", lambda err: errors.append(str(err)))
        page.goto(html.as_uri())
        copy = page.locator(".flinkbench-static").filter(has=page.locator("b", has_text=re.compile(r"^counting$"))).first
        copy.scroll_into_view_if_needed()
        assert copy.locator(".flinkbench-static-state").inner_text() == "FINISHED"

        results = copy.locator("[data-section=results]")
        assert results.locator("table.flinkbench-static-results thead th").all_inner_texts() == [
            "key", "window_start", "window_end", "numbers", "seq_sum"]
        assert results.locator("tbody tr").count() == 100 and "the last 100 of 180 rows" in results.inner_text()
        results.screenshot(path=str(SCREENSHOTS / "saved-notebook-results.png"))

        graph = copy.locator("[data-section=graph]")
        canvas = graph.locator("[data-figure=graph] canvas").first
        canvas.wait_for(state="visible")
        assert share_of(canvas.screenshot(), NODE_FILL) > 0.05, "the graph's task boxes are drawn"
        assert graph.locator("table.flinkbench-static-tasks tbody tr").count() == 2
        graph.screenshot(path=str(SCREENSHOTS / "saved-notebook-graph.png"))

        checkpoints = copy.locator("[data-section=checkpoints]")
        timeline = checkpoints.locator("[data-figure=checkpoints] canvas").first
        timeline.wait_for(state="visible")
        assert share_of(timeline.screenshot(), COMPLETED) > 0.01, "completed checkpoints are drawn as green spans"
        rows = checkpoints.locator("table.flinkbench-static-checkpoints tbody tr")
        assert rows.count() >= 2 and "\u2605 restored" in checkpoints.inner_text()
        checkpoints.screenshot(path=str(SCREENSHOTS / "saved-notebook-checkpoints.png"))

        failover = copy.locator("[data-section=failover]")
        assert failover.locator("table.flinkbench-static-restarts tbody tr").count() == 1
        assert "TaskManagers lost: tm-" in failover.inner_text()
        copy.screenshot(path=str(SCREENSHOTS / "saved-notebook-copy.png"))
    assert not [e for e in errors if "Bokeh" in e or "flinkbench" in e], errors
    assert all(not url.startswith("file:") for url in refused)
