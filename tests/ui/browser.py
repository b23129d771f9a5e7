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
