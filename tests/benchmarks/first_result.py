"""Seconds a notebook user waits for a first result: in a fresh kernel (nbclient), from ``%flink local``
to the rows of a ``%%flink`` cell shown (a 1,000-row job whose cell waits for it, so its view holds
every row when the next cell runs); with the machine's Spark class archive, or as a first-ever start without."""
from __future__ import annotations

import tempfile
from pathlib import Path

from tests.helpers.notebooks import code_notebook, error_of, execute, json_lines, text_of

START = "import json, time\n_t0 = time.monotonic()\n%flink local"
CELL = ("%%flink --wait -o first_rows\n"
        "env.datagen('user INT, amount DOUBLE', number_of_rows=1000, seed=7).collect()")
CHECK = "print('CHECK ' + json.dumps({'seconds': time.monotonic() - _t0, 'rows': len(first_rows)}))"


def first_result_s(timeout: float = 300, first_ever: bool = False) -> float:
    """One fresh kernel: start a local cluster, run the cell, stop; the seconds to its rows. ``first_ever``: as on
    a machine where no Flinkbench cluster ran before, with no Spark class archive (an empty folder of them)."""
    nb = code_notebook("%load_ext kernel_magics", START, CELL, CHECK, "%flink stop")
    with tempfile.TemporaryDirectory(prefix="bench-first-result-") as tmp:
        env = {"FLINKBENCH_TASKMANAGER_SPARK_CLASS_ARCHIVE_DIR": str(Path(tmp) / "no-archive")} if first_ever else None
        execute(nb, timeout=timeout, allow_errors=True, save_to=Path(tmp) / "first-result.ipynb", env=env)
    for cell in nb.cells[:4]:
        if error_of(cell) is not None:
            raise RuntimeError(f"first-result notebook failed: {text_of(cell)[-2000:]}")
    found = json_lines(nb.cells[3])
    if found.get("rows") != 1000:
        raise RuntimeError(f"first-result notebook showed {found.get('rows')} rows, expected 1000")
    return round(found["seconds"], 2)
