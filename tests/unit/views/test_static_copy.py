"""The static copy of a job's view: plain HTML a reader without scripts sees (results, tasks, checkpoints,
restarts), the Bokeh figures as embedded JSON for the ones with scripts, and BokehJS only where asked."""
from __future__ import annotations

import json
import re

import pyarrow as pa

from runtime import events
from runtime.views.graph import plan_from_json
from runtime.views.model import ClusterModel
from runtime.views.static_copy import SECTIONS, CopyHeader, render
from tests.helpers.saved_notebooks import StaticCopyParser, static_copy
from tests.unit.views.test_model import JOB, VERTEX, Feed, rest_tm, running_job, snapshot

ITEMS = re.compile(r"<script type='application/json' id='[^']+-items'>(.*?)</script>", re.S)


def failed_over() -> ClusterModel:
    """A job that lost a TaskManager, restarted from checkpoint 1 and finished."""
    model = ClusterModel()
    model.reset(snapshot([rest_tm("tm-a"), rest_tm("tm-b")]))
    model.set_connection("connected", "http://127.0.0.1:8081", "connected")
    feed = Feed(model)
    model.set_plan(JOB, plan_from_json({"nodes": [
        {"id": VERTEX, "description": "Source: datagen -> Collect", "parallelism": 2, "inputs": []}]}))
    running_job(feed)
    feed(events.CheckpointTriggered(JOB, 1, False))
    feed(events.CheckpointCompleted(JOB, 1, False, 0.2, 1234, "file:///chk-1"))
    feed(events.TaskManagerLost("tm-a", "heartbeat timed out"))
    feed(events.JobRestarting(JOB, 1, "TaskManager tm-a lost", 1.0))
    feed(events.CheckpointRestored(JOB, 1, "file:///chk-1"))
    feed(events.JobStatusChanged(JOB, "clicks", "FINISHED", "RUNNING", 1))
    return model


def test_the_copy_shows_results_tasks_checkpoints_and_the_failover_as_plain_html():
    html = render(failed_over(), CopyHeader("clicks", JOB, "FINISHED", 250, made_at=1.7e9),
                  pa.table({"user": ["a", "b"], "clicks": [3, 4]}))
    parsed = StaticCopyParser.parse(html)
    assert parsed.state == "FINISHED" and parsed.sections == list(SECTIONS)
    tables = {t["class"]: t for t in parsed.tables}
    assert tables["flinkbench-static-results"]["columns"] == ["user", "clicks"]
    assert tables["flinkbench-static-results"]["rows"] == [["a", "3"], ["b", "4"]]
    assert "the last 2 of 250 rows" in html
    assert [r[0] for r in tables["flinkbench-static-tasks"]["rows"]] == ["Source: datagen -> Collect"]
    checkpoint = tables["flinkbench-static-checkpoints"]["rows"][0]
    assert checkpoint[:3] == ["1", "checkpoint", "COMPLETED"] and checkpoint[-1] == "\u2605 restored"
    assert tables["flinkbench-static-restarts"]["rows"][0][1:] == ["1", "1.0", "TaskManager tm-a lost"]
    assert "TaskManagers lost: tm-a" in html and "attempt 1, restarts 1" in html
    assert static_copy(html) == {"state": "FINISHED", "sections": list(SECTIONS), "results": ["user", "clicks"],
                                 "tasks": ["Source: datagen -> Collect"], "restarts": 1, "rows": 2}


def test_the_figures_are_embedded_for_their_divs_and_bokehjs_only_where_asked():
    model = failed_over()
    plain = render(model, CopyHeader("clicks", JOB, "FINISHED"), None)
    items = json.loads(ITEMS.search(plain).group(1).replace("<\\/", "</"))
    targets = {item["target_id"] for item in items}
    assert {t.rsplit("-", 1)[1] for t in targets} == {"graph", "throughput", "checkpoints", "slots"}
    assert all(f"id='{t}'" in plain for t in targets), "each figure has its div"
    assert all(item["doc"]["roots"] for item in items)
    assert "bokehjs'" not in plain and "no rows collected" in plain
    carrying = render(model, CopyHeader("clicks", JOB, "FINISHED"), None, with_bokehjs=True)
    assert len(carrying) - len(plain) > 500_000 and "-bokehjs'>" in carrying, "BokehJS itself, inline"
    assert "DataTable" not in plain, "no figure needs Bokeh's table bundle"


def test_a_printed_result_a_statement_and_a_failure_are_kept_escaped():
    html = render(failed_over(), CopyHeader("q", JOB, "FAILED", statement="SELECT a < b FROM t",
                                            failure="ValueError: <boom>"), None, results_text="| a |\n| 1 |")
    assert "SELECT a &lt; b FROM t" in html and "ValueError: &lt;boom&gt;" in html
    assert "<pre class='flinkbench-static-results'" in html and "| a |" in html


def test_a_job_without_a_plan_or_checkpoints_says_so():
    model = ClusterModel()
    model.reset(snapshot([rest_tm("tm-a")]))
    html = render(model, CopyHeader("empty", JOB, "CANCELED"), None)
    assert "the job's plan was not known" in html and "no checkpoints" in html and "no restarts" in html
