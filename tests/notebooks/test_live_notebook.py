"""tests/notebooks/live_cluster.ipynb executed headless: %flink local, the clicks job in a %%flink cell,
a TaskManager killed mid-job, recovery, results; the widgets' data checked against the REST API."""
from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from tests.helpers.notebooks import error_of, execute, json_lines, text_of, widget_views, with_parameters

pytestmark = pytest.mark.slow

NOTEBOOK = Path(__file__).with_name("live_cluster.ipynb")
CONF = """
heartbeat.interval: 500 ms
heartbeat.timeout: 3 s
spark.driver.memory: 512m
restart-strategy.type: fixed-delay
restart-strategy.fixed-delay.delay: 1 s
"""


def test_live_notebook_runs_the_clicks_job_through_a_task_manager_loss(tmp_path):
    conf = tmp_path / "cluster.yaml"
    conf.write_text(CONF)
    # 20 s of input at the pace, lifted once the job has recovered from the kill: the rest is read at full speed
    nb = with_parameters(nbformat.read(str(NOTEBOOK), as_version=4), CONF=str(conf), ROWS=40_000, RATE=2_000.0,
                         PACE=str(tmp_path / "pace"))
    nb = execute(nb, timeout=420, save_to=tmp_path / "live_cluster.executed.ipynb")
    cells = [c for c in nb.cells if c.cell_type == "code"]
    started, submitted, dashboard, running, killed, recovered, finished, reference, compared = cells[2:11]
    assert all(error_of(c) is None for c in cells), [text_of(c) for c in cells if error_of(c)]

    assert "local cluster running" in text_of(started) and "2 TaskManagers x 2 slots" in text_of(started)
    views = widget_views(submitted)
    assert len(views) == 1, "the %%flink cell shows one live view"
    assert views[0]["model_id"] in nb.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]

    assert len(widget_views(dashboard)) == 1 and "/dashboard" in text_of(dashboard)

    before = json_lines(running)
    assert before["view_slots"] == before["rest_slots"], "slot view and REST agree while the job runs"
    assert before["dashboard_slots"] == before["rest_slots_for_dashboard"], "so does %flink dashboard's"
    job_slots = [s for s in before["rest_slots"] if s[2] == before["job_id"]]
    assert len(job_slots) == 2 and len(before["rest_slots"]) == 4

    assert "killed TaskManager" in text_of(killed)
    after = json_lines(recovered)
    assert after["view_lost"] == after["rest_lost"] == [after["victim"]], "the killed TaskManager shows as lost"
    assert after["view_slots_after"] == after["rest_slots_after"]
    assert all(tm != after["victim"] for tm, _, _ in after["view_slots_after"])

    end = json_lines(finished)
    assert end["view_checkpoints"] == end["rest_checkpoints"], "checkpoint view and REST agree (also on the restored one)"
    assert end["rest_checkpoints"]["completed"], "checkpoints completed"
    assert end["view_failover"] == end["rest_failover"] == {"state": "FINISHED", "restarts": 1}
    assert end["duplicates"] == 0, "exactly once: no window counted twice after the restore"
    assert end["rows_total"] == end["collected"] > 1_000
    assert len(end["table_rows"]) == 20, "the live table keeps only the last --max-rows rows"
    shown = [(r["user"], r["clicks"]) for r in end["table_rows"]]
    assert shown == [(r["user"], r["clicks"]) for r in end["last_rows"]], "the table holds the newest rows"

    assert error_of(reference) is None
    same = json_lines(compared)
    assert same["same_rows"] and same["same_results"], same
