"""The teaching notebooks in notebooks/, each executed headless from top to bottom (nbclient) in a
fresh kernel of this interpreter started in their folder: every cell succeeds, the notebooks' own checks
against pandas hold, and the local cluster each one starts is stopped with no process left behind.

They are committed with their outputs (``make notebooks``); the same run checks that those outputs come
from the current code: its outputs' timing-free parts (tests/helpers/saved_notebooks.py) equal the
committed ones', and a recording a notebook makes equals the committed recording in the same way."""
from __future__ import annotations

import sys
from pathlib import Path

import nbformat
import psutil
import pytest
from jupyter_client.kernelspec import KernelSpecManager

from tests.helpers.clusters import wait_until
from tests.helpers.notebooks import REPO, error_of, execute, text_of, with_parameters
from tests.helpers.saved_notebooks import BOKEHJS_LOAD, fingerprint, recording_fingerprint, tidy

NOTEBOOK_DIR = REPO / "notebooks"
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))

# What each notebook must have shown, besides running without errors (its asserts run in the kernel).
SHOWN = {
    "01-first-stream": [
        "local cluster running: JobManager", "2 TaskManagers x 2 slots", "REST: GET /overview",
        "REST: POST /jobs", "CLI:  flinkbench run", "the same rows and values pandas computes",
        "ExecutionGraph of 'explained': 2 tasks, 2 slots needed",
        "task 'Source: datagen' x1", "task 'Filter -> WithColumns -> Collect' x2",
        "rows so far", "slots: 2/4 free; jobs: 1 running", "?mode=cancel", "ticker: CANCELED after",
    ],
    "02-event-time-and-windows": [
        "tumbling: ", "sliding: ", "sessions: ", "Window(tumbling) -> Collect: 3 late rows dropped",
        "the same as pandas without the stragglers", "the same as pandas with the stragglers",
    ],
    "03-state-and-timers": [
        "hash(user)", "running totals: 80 rows, the same as pandas", "alerts, the same as pandas",
        "the session window and the process function agree",
    ],
    "04-checkpoints-and-failures": [
        "complete:", "killed TaskManager", "restarted 1 time(s), restored from checkpoint",
        "FINISHED: 180 windows, each exactly once", "triggered", "/stop", "FINISHED; ",
        "FINISHED at parallelism 1, restored from", "across a stop and a resume at another parallelism",
        "replayed: FINISHED, 1 restart(s), TaskManagers lost: 1",
    ],
    "05-streaming-sql": [
        "*ROWTIME*", "tumbling: ", "hopping: ", "cumulating: ", "sessions: ", "changelog applied: ",
        "+I", "-U", "join: 4 users, the same as pandas", "== Optimized Physical Plan ==", "GroupAggregate",
        "exercise: 6 rows, the two biggest clicks of each user",
    ],
    "06-slots-and-resources": [
        "ExecutionGraph of 'shared'", "shared: 10 users, the same counts as pandas", "5 subtasks in 2 slots",
        "TaskManagers started for the wide job: 1", "resource provider: requested", "resource provider: started",
        "resource provider: registered", "resource provider: idle", "resource provider: stopped",
        "1 TaskManager left", "exercise: 3 tasks in 6 slots, 2 TaskManagers started; 10 users, the same counts",
    ],
    "07-high-availability": [
        "the leader is http", "killed the leading JobManager", "now leads (it was",
        "the job resumed on the new leader from checkpoint", "high-availability.storageDir",
        "FINISHED: 1507 orders, each exactly once and as pandas computes them, across the leader change",
        "one job, however often it is submitted",
    ],
    "08-change-data-capture": [
        "PostgreSQL 15", "wal_level = logical", "table name", "Execute statement succeeded",
        "after the snapshot: 4 countries, 300 orders, the same as PostgreSQL's GROUP BY",
        "revenue: 4 countries, the same as PostgreSQL's own GROUP BY after inserts, updates and deletes",
        "notebook_orders",
    ],
    "09-a-class-on-one-cluster": [
        "{'ada': 2, 'bo': 1}", "ada sees [\"ada's clicks\"] | bo sees [\"bo's orders\"]", "slots held",
        "bo cancelling ada's job: HTTP 404: Job ", "not found", "bo's view of the slots:", "(another user)",
        "slot quota exceeded: user 'bo' may hold 1 slot and holds 1 ('bo's orders' 1); job 'bo's second job' needs 1",
        "ada's and bo's jobs are still RUNNING", "exercise: ada may start a job of parallelism 1, and no wider one",
        "students removed: True",
    ],
}


# What a notebook writes beside itself (its parameter cell names where), committed with it.
RECORDINGS = {"04-checkpoints-and-failures": ("RECORDING", "recordings/counting-with-a-lost-taskmanager.jsonl")}


def test_every_notebook_is_committed_with_its_outputs_and_listed_in_order():
    assert [p.stem for p in NOTEBOOKS] == sorted(SHOWN), "a check list for every notebook, and a notebook for each"
    listing = (NOTEBOOK_DIR / "README.md").read_text()
    positions = [listing.find(f"({p.name})") for p in NOTEBOOKS]
    assert -1 not in positions and positions == sorted(positions), "notebooks/README.md links each, in order"
    for path in NOTEBOOKS:
        nb = nbformat.read(str(path), as_version=4)
        nbformat.validate(nb)
        assert nb.metadata["kernelspec"]["name"] == "python3", path.name
        code = [c for c in nb.cells if c.cell_type == "code"]
        assert [c.execution_count for c in code] == list(range(1, len(code) + 1)), \
            f"{path.name}: run top to bottom in one kernel ('make notebooks')"
        assert not any(error_of(c) for c in code), f"{path.name} was committed with an error"
        assert "widgets" not in nb.metadata and not any(BOKEHJS_LOAD in o.get("data", {}) for c in code
                                                        for o in c.outputs), f"{path.name} is not tidied"
        views = [c for c in code if any(o.get("data", {}).get("text/plain", "").startswith("the live view of job")
                                        for o in c.outputs)]  # a job's view (a dashboard leaves no copy)
        assert all(any("flinkbench-static'" in o.get("data", {}).get("text/html", "") for o in c.outputs)
                   for c in views), f"{path.name}: a job's view without its static copy"
        assert code[0].source.strip() == "%load_ext kernel_magics", path.name
        assert code[-1].source.strip() == "%flink stop", f"{path.name} must end by stopping its cluster"
    for stem, (_, recording) in RECORDINGS.items():
        assert (NOTEBOOK_DIR / recording).is_file(), f"{stem}'s recording is committed"


def _alive_children() -> set[int]:
    alive = set()
    for p in psutil.Process().children(recursive=True):
        try:
            if p.status() != psutil.STATUS_ZOMBIE:
                alive.add(p.pid)
        except psutil.Error:
            pass
    return alive


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_teaching_notebook_runs_top_to_bottom(path, tmp_path):
    python = KernelSpecManager().get_kernel_spec("python3").argv[0]  # jupyter_client runs "python" as sys.executable
    assert python in ("python", "python3", sys.executable), f"the python3 kernel would run {python}, not {sys.executable}"
    before = _alive_children()
    nb = nbformat.read(str(path), as_version=4)
    committed = fingerprint(nb)
    if path.stem in RECORDINGS:  # written where the test says, not over the committed one
        parameter, recording = RECORDINGS[path.stem]
        nb = with_parameters(nb, **{parameter: str(tmp_path / Path(recording).name)})
    nb = execute(nb, timeout=240, save_to=tmp_path / path.name, cwd=NOTEBOOK_DIR)
    code = [c for c in nb.cells if c.cell_type == "code"]
    failed = [text_of(c) for c in code if error_of(c)]
    assert not failed, failed

    shown = "\n".join(text_of(c) for c in code)
    missing = [s for s in SHOWN[path.stem] if s not in shown]
    assert not missing, f"{path.name} did not show {missing}; executed copy in {tmp_path}"
    assert "stopped the local cluster at http://127.0.0.1:" in text_of(code[-1])

    wait_until(lambda: _alive_children() <= before, 30, f"the processes {path.name} started to end")

    fresh = fingerprint(tidy(nb))
    stale = [(i, cell, now) for i, (cell, now) in enumerate(zip(committed, fresh)) if cell != now]
    assert len(committed) == len(fresh) and not stale, (
        f"{path.name}'s committed outputs do not come from the current code: run 'make notebooks' and commit "
        f"(cell index, committed, fresh run): {stale[:3]}")
    if path.stem in RECORDINGS:
        made = recording_fingerprint(tmp_path / Path(RECORDINGS[path.stem][1]).name)
        assert made == recording_fingerprint(NOTEBOOK_DIR / RECORDINGS[path.stem][1]), \
            f"{path.name}'s committed recording is not what it records now: run 'make notebooks' and commit"


@pytest.mark.slow
def test_without_postgresql_the_cdc_notebook_says_what_to_install_and_stops_before_starting_anything(tmp_path):
    from nbclient.exceptions import CellExecutionError

    before = _alive_children()
    nb = nbformat.read(str(NOTEBOOK_DIR / "08-change-data-capture.ipynb"), as_version=4)
    for cell in nb.cells:  # the committed outputs go: what is left after the run is what it showed
        if cell.cell_type == "code":
            cell.outputs = []
    with pytest.raises(CellExecutionError) as stopped:
        execute(nb, timeout=120, env={"FLINKBENCH_POSTGRES_BIN": str(tmp_path / "no-postgres")})
    assert stopped.value.ename == "PostgresNotInstalled"
    assert stopped.value.evalue.startswith("PostgreSQL is not installed here") and "install Debian's postgresql" in \
        stopped.value.evalue
    assert "Traceback" not in str(stopped.value) and "Warning" not in str(stopped.value), "one line, nothing else"
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(not c.get("outputs") for c in code[code.index(_cell_with(code, "start_server")) + 1:]), "it stopped there"
    assert _alive_children() <= before, "no cluster was started"


def _cell_with(cells, text: str):
    return next(c for c in cells if text in c.source)
