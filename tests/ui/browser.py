"""Headless Chromium for UI tests: Debian's /usr/bin/chromium driven by Playwright, fresh profile each run."""
from __future__ import annotations

import contextlib
import os
import shutil
from pathlib import Path

CHROMIUM = os.environ.get("FLINKBENCH_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
SCREENSHOTS = Path(__file__).resolve().parents[2] / "test-output" / "ui"


def chromium_missing_reason() -> str | None:
    if not (os.path.exists(CHROMIUM) or shutil.which(CHROMIUM)):
        return f"Chromium not found at {CHROMIUM} (install Debian's chromium package or set FLINKBENCH_CHROMIUM)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright Python package is not installed (pip install -e '.[test]')"
    return None


@contextlib.contextmanager
def chromium_context(profile_dir):
    """A persistent context is the only way to give Chromium a user-data-dir of our choosing."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            str(profile_dir), executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS,
            viewport={"width": 1500, "height": 950})
        try:
            yield context
        finally:
            context.close()


def screenshot(page, name: str) -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path))
    return path


def open_panel(page):
    """The Flinkbench side panel, opened from JupyterLab's left bar if it is not showing."""
    panel = page.locator("#flinkbench-panel")
    if not panel.is_visible():
        page.click('.jp-SideBar li[data-id="flinkbench-panel"]')
    panel.wait_for(state="visible")
    return panel


def confirm_dialog(page):
    page.locator(".jp-Dialog .jp-Dialog-button.jp-mod-accept").click()
    page.locator(".jp-Dialog").wait_for(state="detached")


@contextlib.contextmanager
def notebook_page(profile_dir, lab, notebook: str, start_timeout_ms: int = 180_000):
    """A page with ``notebook`` of JupyterLab server ``lab`` open and its kernel idle; fails at the end if the
    page raised an error meanwhile."""
    errors: list[str] = []
    with chromium_context(profile_dir) as context:
        page = context.new_page()
        page.set_default_timeout(60_000)
        page.on("pageerror", lambda err: errors.append(str(err)))
        page.goto(f"{lab.url}/lab/tree/{notebook}?token={lab.token}")
        page.locator(".jp-NotebookPanel .jp-Notebook-ExecutionIndicator[data-status='idle']").wait_for(
            timeout=start_timeout_ms)
        yield page
        assert not errors, errors


def run_all_cells(page, lab) -> None:
    """Once the notebook's kernel is connected and idle, run every cell (JupyterLab's Run menu)."""
    from tests.helpers.clusters import wait_until

    wait_until(lambda: any(k["connections"] and k["execution_state"] == "idle" for k in lab.json("GET", "/api/kernels")[1]
                           if isinstance(k, dict)), 120, "the notebook's kernel connected")
    page.get_by_role("menuitem", name="Run", exact=True).click()
    page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
