"""Take the README's screenshots in headless Chromium, the way tests/ui does: a live ``%%flink`` cell with
the Flinkbench panel beside it (extension/screenshots/flink-cell-live.png), and the panel alone
(panel-cluster.png).

    make screenshots      (or: .venv/bin/python scripts/readme-screenshots.py, from the repository root)

Needs what the UI tests need: the development venv, node and npm (the panel is built and linked first by
scripts/build-extension.sh), Java 17+ and Chromium (scripts/install-system-deps.sh chromium; another
binary through FLINKBENCH_CHROMIUM). Starts a local cluster of 2 TaskManagers x 2 slots and a JupyterLab
whose kernels and panel connect to it (FLINKBENCH_JOBMANAGER_URL), runs the README's first ``%%flink``
cell (read from README.md, so the picture shows what the README says), and stops everything it started.
It takes two to three minutes on two cores.

The pictures are taken once the job's first windows have fired (rows collected under the cell); the
panel's with the job opened, so it shows the job's graph and subtasks with their live figures. The
job list's rate is that of rows leaving the job's last tasks, for this windowed job its window results,
so it reads 0/s between firings.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import nbformat  # noqa: E402

from runtime.cluster import LocalCluster  # noqa: E402
from tests.ui.browser import chromium_context, chromium_missing_reason  # noqa: E402
from tests.ui.jupyter import JupyterLabServer  # noqa: E402

OUT = REPO / "extension" / "screenshots"
PANEL_WIDTH = 640  # px: the panel's job graph draws its tasks side by side
JOB_START_MS = 240_000  # a TaskManager's Spark session starts with the job's first task, slowly on a busy machine


def readme_cell() -> str:
    """The README's first ``%%flink`` cell, as the README shows it."""
    blocks = re.findall(r"^```\n(.*?)^```", (REPO / "README.md").read_text(), flags=re.S | re.M)
    cell = next((b for b in blocks if b.startswith("%%flink ")), None)
    if cell is None:
        raise SystemExit("README.md has no ``` block starting with %%flink")
    return cell.rstrip("\n")


def notebook(path: Path) -> None:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source) for source in ("%load_ext kernel_magics", readme_cell())]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, str(path))


def shoot(lab: JupyterLabServer, profile: Path) -> None:
    with chromium_context(profile) as context:
        page = context.new_page()
        page.set_default_timeout(60_000)
        page.goto(f"{lab.url}/lab/tree/first-job.ipynb?token={lab.token}")
        page.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']").wait_for(timeout=JOB_START_MS)
        try:
            run_and_capture(page)
        except Exception:
            failed = Path(tempfile.gettempdir()) / "flinkbench-screenshots-failed.png"
            page.screenshot(path=str(failed))
            print(f"failed; the page as it was is in {failed}", file=sys.stderr)
            raise


def run_and_capture(page) -> None:
    accept = page.locator(".jp-Dialog .jp-Dialog-button.jp-mod-accept")  # "Select Kernel", when JupyterLab asks
    try:
        accept.wait_for(timeout=3000)
        accept.click()
    except Exception:  # noqa: BLE001 - no dialog: the kernel started by itself
        pass
    page.locator('.lm-MenuBar-itemLabel:text-is("Run")').click()
    page.locator('.lm-Menu-itemLabel:text-is("Run All Cells")').click()
    page.click('.jp-SideBar li[data-id="flinkbench-panel"]')
    panel = page.locator("#flinkbench-panel")
    job = panel.locator('.jp-Flinkbench-job[data-job-name="clicks"][data-state="RUNNING"]')
    job.wait_for(timeout=JOB_START_MS)
    output = page.locator(".jp-CodeCell").nth(1).locator(".jp-OutputArea-output")
    output.get_by_text(re.compile(r"[1-9][\d,]* rows collected")).wait_for(timeout=JOB_START_MS)
    page.wait_for_timeout(5000)  # let the live view draw a few updates before the picture
    OUT.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(OUT / "flink-cell-live.png"))
    widen_sidebar(page, PANEL_WIDTH)
    job.locator(".jp-Flinkbench-jobName").click()  # the row's middle is its cancel button
    panel.locator(".jp-Flinkbench-jobDetail .jp-Flinkbench-jobGraph").wait_for()
    page.wait_for_timeout(3000)
    capture_panel(page, panel, OUT / "panel-cluster.png")


def widen_sidebar(page, width: int) -> None:
    """Drag the left sidebar's edge out, as a user would, so the opened job's graph has room."""
    handle = page.locator("#jp-main-split-panel > .lm-SplitPanel-handle:not(.lm-mod-hidden)").first
    box = handle.bounding_box()
    y = box["y"] + box["height"] / 2
    page.mouse.move(box["x"] + box["width"] / 2, y)
    page.mouse.down()
    page.mouse.move(width, y, steps=10)
    page.mouse.up()


def capture_panel(page, panel, path: Path) -> None:
    """The panel down to its last line, not the empty rest of its full-height column."""
    box = panel.bounding_box()
    bottom = panel.evaluate("el => Math.max(...[...el.querySelectorAll('*')].map(e => e.getBoundingClientRect().bottom))")
    height = min(box["height"], bottom - box["y"] + 12)
    page.screenshot(path=str(path), clip={"x": box["x"], "y": box["y"], "width": box["width"], "height": height})


def main() -> int:
    missing = chromium_missing_reason()
    if missing:
        print(missing, file=sys.stderr)
        return 1
    built = subprocess.run(["bash", str(REPO / "scripts" / "build-extension.sh")], cwd=REPO,
                           env={**os.environ, "VENV": sys.prefix})
    if built.returncode != 0:
        return built.returncode
    with tempfile.TemporaryDirectory(prefix="flinkbench-shots-") as scratch:
        work = Path(scratch)
        (work / "cluster").mkdir()
        with LocalCluster(taskmanagers=2, slots=2, working_dir=str(work / "cluster")) as cluster:
            env = {"FLINKBENCH_JOBMANAGER_URL": cluster.url, "FLINKBENCH_TOKEN_FILE": cluster.token_file}
            with JupyterLabServer(work / "lab", env) as lab:
                notebook(lab.root / "first-job.ipynb")
                shoot(lab, work / "profile")
    print(f"screenshots written to {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
