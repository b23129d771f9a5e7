"""Run the teaching notebooks top to bottom and write them back with their outputs, as they are committed.

    make notebooks      (or: .venv/bin/python scripts/run_notebooks.py [notebooks/NN-name.ipynb ...])

Each notebook runs in a fresh kernel started in its own folder, as JupyterLab starts it, the way
tests/notebooks/test_teaching_notebooks.py runs them; its outputs are then tidied of what only a live
kernel uses (tests/helpers/saved_notebooks.py) and the notebook is written back. What a notebook writes
beside itself comes with it: 04's recording of a failure, in notebooks/recordings/. A notebook that fails
is left as it was, and the script ends with status 1 after trying the others.

Needs what the notebooks need: Java 17+ (each starts a local cluster) and, for 08, PostgreSQL. About two
minutes a notebook on two cores.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import nbformat  # noqa: E402
from nbclient.exceptions import CellExecutionError  # noqa: E402

from tests.helpers.notebooks import execute  # noqa: E402
from tests.helpers.saved_notebooks import tidy  # noqa: E402

NOTEBOOKS = REPO / "notebooks"
CELL_TIMEOUT_S = 240


def run(path: Path) -> bool:
    """Execute, tidy and write back one notebook; False (and nothing written) if a cell failed."""
    started = time.monotonic()
    nb = nbformat.read(str(path), as_version=4)
    try:
        execute(nb, timeout=CELL_TIMEOUT_S, cwd=path.parent)
    except CellExecutionError as err:
        print(f"{path.name}: a cell failed, the notebook is left as it was:\n{err}", file=sys.stderr)
        return False
    nbformat.write(tidy(nb), str(path))
    print(f"{path.name}: written with its outputs in {time.monotonic() - started:.0f} s "
          f"({path.stat().st_size / 1e6:.1f} MB)", flush=True)
    return True


def main(argv: list[str]) -> int:
    paths = [Path(a).resolve() for a in argv] or sorted(NOTEBOOKS.glob("*.ipynb"))
    results = [run(p) for p in paths]
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
