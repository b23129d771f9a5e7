"""Take the README's screenshots in headless Chromium, the way tests/ui does: a live ``%%flink`` cell with
the Flinkbench panel beside it, and the panel alone. Writes extension/screenshots/*.png.

    python scripts/readme-screenshots.py      (from the repository root, in the development venv)

Starts a local cluster of 2 TaskManagers x 2 slots and a JupyterLab whose kernels connect to it
(FLINKBENCH_JOBMANAGER_URL), runs the README's first cells, waits until the panel shows the job's
record rate, and stops everything it started.
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import nbformat  # noqa: E402

from runtime.cluster import LocalCluster  # noqa: E402
from tests.helpers.clusters import wait_until  # noqa: E402
from tests.ui.browser import chromium_context  # noqa: E402
from tests.ui.jupyter import JupyterLabServer  # noqa: E402

OUT = REPO / "extension" / "screenshots"
CELLS = ["%load_ext kernel_magics",
         "%%flink --name clicks --parallelism 2 --checkpoint-interval 5s\n"
         "from runtime.examples import clicks\n"
         "clicks.build(env, rows=None, rows_per_second=2000)"]


def notebook(path: Path) -> None:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source) for source in CELLS]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, str(path))


def shoot(lab: JupyterLabServer, profile: Path) -> None:
    with chromium_context(profile) as context:
        page = context.new_page()
        page.set_default_timeout(180_000)
        page.goto(f"{lab.url}/lab/tree/first-job.ipynb?token={lab.token}")
        page.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']").wait_for()
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
    rate = panel.locator('.jp-Flinkbench-job[data-job-name="clicks"][data-state="RUNNING"] [data-field="rate"]')
    rate.wait_for()
    wait_until(lambda: rate.inner_text() not in ("0/s", "-"), 120, "a live record rate in the panel")
    page.locator(".jp-CodeCell").nth(1).locator(".jp-OutputArea-output .jupyter-widgets").first.wait_for()
    page.wait_for_timeout(4000)  # let the live view draw a few updates before the picture
    OUT.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(OUT / "flink-cell-live.png"))
    panel.screenshot(path=str(OUT / "panel-cluster.png"))


def main() -> int:
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
