"""The README's notebook commands, as shown, in a real kernel: ``%load_ext``, ``%flink local``, the two clicks cells
and the SQL cell, then ``%flink stop``. Between them, cells of the test's own read what a newcomer would see: the
first window's rows within the window's size + 5 s of the cell on a warm cluster, windows that count many clicks per
user, no "limits this job" warning at the README's 1,000 rows/s, a SQL watermark lag of seconds; and after
``%flink stop``, no TaskManager requested or lost while it stopped (the event stream) and no cluster folder left.
"""
from __future__ import annotations

import pytest

from tests.helpers.notebooks import code_notebook, error_of, execute, json_lines, text_of
from tests.helpers.readme_inventory import NOTEBOOK, run_by

pytestmark = pytest.mark.slow

WINDOW_S = 10.0

CELLS = [c for c in run_by(NOTEBOOK) if c.startswith("%%")]
SETUP, LOCAL = [c for c in run_by(NOTEBOOK) if not c.startswith("%%")]
[CLICKS] = [c for c in CELLS if c.startswith("%%flink --name clicks") and "-o" not in c.splitlines()[0]]
[CLICKS_OUT] = [c for c in CELLS if c.startswith("%%flink --name clicks") and "-o clicks_out" in c]
[SQL] = [c for c in CELLS if c.startswith("%%flink sql")]

WARM = """
import os, time
from kernel_magics import current_session
from tests.helpers.clusters import wait_until
from tests.helpers.live_checks import report
session = current_session()
cluster = session.cluster
def warmed(child):
    with open(child.log_path, encoding="utf-8", errors="replace") as log:
        text = log.read()
        return "warmed up" in text or "warm-up failed" in text
wait_until(lambda: all(warmed(tm) for tm in cluster.taskmanagers), 300, "both TaskManagers warmed up (a warm cluster)")
t0 = time.monotonic()
"""

FIRST_ROWS = """
view = list(session.jobs.values())[-1]
wait_until(lambda: view.rows_total > 0, 120, "the first window's rows")
first_rows_s = time.monotonic() - t0
hints = set()
def watch(seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if "limits this job" in view.header.value:
            hints.add(view.header.value)
        time.sleep(0.5)
watch(12)
frame = view.dataframe()
latest = frame[frame["window_end"] == frame["window_end"].max()]
report(first_rows_s=first_rows_s, hints=sorted(hints), windows=int(frame["window_end"].nunique()),
       median_clicks=float(latest["clicks"].median()), users=int(latest["user"].nunique()),
       busy={v["name"]: v["metrics"]["busy_time_ms_per_s"] for v in session.client.get(f"/jobs/{view.job_id}")["vertices"]})
"""

OUTPUT = """
def second_window():
    # each window task's collect sink hands its rows over when a checkpoint completes: a window's users come from
    # two window subtasks, which may fire it on either side of one checkpoint's barrier
    frame = globals().get("clicks_out")
    ends = sorted(frame["window_end"].unique()) if frame is not None and "window_end" in frame else []
    return frame[frame["window_end"] == ends[1]] if len(ends) >= 2 else None
try:
    wait_until(lambda: second_window() is not None and second_window()["user"].nunique() == 50, 60,
               "the second window's rows from both window subtasks")
except AssertionError:
    pass  # reported below as seen
full = second_window() if second_window() is not None else clicks_out.iloc[0:0]
report(median_clicks=float(full["clicks"].median()), users=int(full["user"].nunique()))
for job in list(session.jobs.values()):
    session.client.job(job.job_id).cancel()
t1 = time.monotonic()
"""

SQL_LAG = """
sql_view = list(session.jobs.values())[-1]
wait_until(lambda: sql_view.rows_total > 0, 60, "the SQL query's first rows")
sql_first_s = time.monotonic() - t1
def lags():
    graph = sql_view.views.job_graph
    return [n.watermark_lag_s for n in graph.nodes if n.watermark_lag_s is not None] if graph else []
wait_until(lambda: lags(), 60, "a watermark lag in the SQL job's graph")
time.sleep(3)
report(lags=lags(), name=session.client.get(f"/jobs/{sql_view.job_id}")["name"], first_rows_s=sql_first_s)
"""

BEFORE_STOP = """
import tempfile
from tests.helpers.events import EventRecorder
recorder = EventRecorder(cluster)
folder = cluster.working_dir
"""

AFTER_STOP = """
recorder._thread.join(30)
during = [e for e in recorder.events if e["type"] == "TaskManagerLost"
          or e["type"] == "ResourceProviderDecision" and e["decision"] in ("requested", "started")]
report(during=during, stream_ended=not recorder._thread.is_alive(), folder_left=os.path.exists(folder),
       folders=[f for f in os.listdir(tempfile.gettempdir()) if os.path.join(tempfile.gettempdir(), f) == folder])
"""


def test_the_readme_notebook_commands_as_a_newcomer_runs_them(tmp_path):
    nb = execute(code_notebook(f"{SETUP}\n{LOCAL}", WARM, CLICKS, FIRST_ROWS, CLICKS_OUT, OUTPUT, SQL, SQL_LAG,
                               BEFORE_STOP, "%flink stop", AFTER_STOP),
                 timeout=420, save_to=tmp_path / "readme.ipynb")
    cells = nb.cells
    assert all(error_of(c) is None for c in cells), [text_of(c)[-2000:] for c in cells if error_of(c)]
    started, _, clicks, first, _, output, sql, sql_lag, _, stopped, after = cells
    assert "local cluster running" in text_of(started)

    # what does not depend on the machine's speed first, so that a slow machine's failure below hides none of it
    assert "stopped the local cluster at" in text_of(stopped) and "kept" not in text_of(stopped), text_of(stopped)
    quiet = json_lines(after)
    assert quiet["stream_ended"], "the JobManager ended its event stream when it stopped"
    assert quiet["during"] == [], f"while it stopped, nothing was provisioned or lost: {quiet['during']}"
    assert not quiet["folder_left"] and quiet["folders"] == [], "a cleanly stopped cluster leaves no folder behind"
    seen, full, sql_seen = json_lines(first), json_lines(output), json_lines(sql_lag)
    assert seen["median_clicks"] >= 20 and seen["users"] > 10, f"windows should count many clicks per user: {seen}"
    assert 100 <= full["median_clicks"] <= 260 and full["users"] == 50, f"a full window: ~180 clicks per user: {full}"
    assert sql_seen["name"] == "collect", "an unnamed SQL query is named as Flink names it"

    assert sql_seen["lags"] and max(sql_seen["lags"]) < 5, f"watermark lag of seconds, from rows stamped now: {sql_seen}"
    assert seen["hints"] == [], "a throttled source is idle while its rows fall due, not a bottleneck"
    assert max(seen["busy"].values()) < 750, seen["busy"]
    assert seen["first_rows_s"] <= WINDOW_S + 5, f"first rows after {seen['first_rows_s']:.1f} s on a warm cluster"
    assert sql_seen["first_rows_s"] <= 5, f"the SQL query (no window) showed rows after {sql_seen['first_rows_s']:.1f} s"
