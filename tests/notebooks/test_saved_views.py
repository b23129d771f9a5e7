"""What a notebook keeps of its jobs: each live view's static copy (when the job ends, is cancelled from the
notebook, or the kernel shuts down), recordings of a job's event stream made from the notebook, and their
replay into the same live view in a kernel with no cluster and no Java."""
from __future__ import annotations

import os
import sys

import pyarrow as pa
import pytest

from runtime.views.recording import read
from tests.helpers import readme
from tests.helpers.clusters import wait_until
from tests.helpers.notebooks import REPO, code_notebook, error_of, execute, json_lines, started_kernel, text_of
from tests.helpers.saved_notebooks import static_copy

pytestmark = pytest.mark.slow

RECORDING = "notebooks/recordings/counting-with-a-lost-taskmanager.jsonl"  # made by notebook 04 (make notebooks)
REPLAY = next(c for c in readme.commands("Notebooks that keep their results") if c.startswith("%flink replay"))
NUMBERS = ("%%flink sql\nCREATE TABLE numbers (n BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '40', "
           "'rows-per-second' = '100000', 'fields.n.kind' = 'sequence', 'fields.n.start' = '1', 'fields.n.end' = '40')")
SEQ = "env.datagen('seq BIGINT', {rows}rows_per_second={rate}, fields={{'seq': {{'kind': 'sequence'}}}}).collect()"


def copies(cell) -> list[dict]:
    """The static copies among a cell's outputs, as their timing-free parts."""
    return [static_copy(o.data["text/html"]) for o in cell.outputs
            if "flinkbench-static'" in o.get("data", {}).get("text/html", "")]


def test_a_recorded_failover_plays_in_the_live_view_of_a_kernel_without_java_or_cluster(tmp_path):
    assert REPLAY == f"%flink replay {RECORDING} --speed 10", "the README's replay of notebook 04's recording"
    no_java = tmp_path / "bin"
    no_java.mkdir()
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join((REPO / RECORDING).read_text().splitlines()[:2]) + "\n{\"t\": 1, \"kind\": \"video\"}\n")
    nb = execute(code_notebook(
        "import os, shutil, sys\n"
        "from tests.helpers.live_checks import report\n"
        "report(java=shutil.which('java'), java_home=os.environ.get('JAVA_HOME'))\n"
        "%load_ext kernel_magics",
        REPLAY,  # as the README shows it
        "from kernel_magics import current_session\n"
        "from tests.helpers.clusters import wait_until\n"
        "view, replay = current_session().replays[-1], last_replay\n"
        "def failed_over():\n"
        "    with replay.model.lock:\n"
        "        job = replay.model.jobs.get(replay.recording.job_id)\n"
        "        return job is not None and job.restarts >= 1\n"
        "wait_until(failed_over, 120, 'the restart replayed')\n"
        "current_session().updater.flush()\n"
        "slots = view.views.sources['slots'].data\n"
        "report(state=view.current_state(), header=view.header.value, finished=replay.finished.is_set(),\n"
        "       lost=[tm for tm, state in zip(slots['tm_id'], slots['state']) if state == 'lost'],\n"
        "       causes=view.views.sources['restarts'].data['cause'])",
        "view.wait()\n"
        "wait_until(lambda: view.copy.filled, 60, 'the static copy')\n"
        "report(state=view.current_state(), rows=view.rows_total, spark=sorted(m for m in sys.modules if 'pyspark' in m))",
        f"%flink replay {bad}",
    ), timeout=240, allow_errors=True, env={"PATH": f"{os.path.dirname(sys.executable)}:{no_java}"},
        unset=("JAVA_HOME",), save_to=tmp_path / "replay.ipynb")
    loaded, replayed, midway, ended, refused = nb.cells
    assert all(error_of(c) is None for c in (loaded, replayed, midway, ended)), [text_of(c) for c in nb.cells]
    assert json_lines(loaded) == {"java": None, "java_home": None}, "no Java in the kernel"

    during = json_lines(midway)
    assert not during["finished"] and during["state"] in ("CREATED", "RUNNING", "RESTARTING"), during
    assert "restarts 1" in during["header"] and "replay of " + RECORDING in during["header"]
    assert len(set(during["lost"])) == 1 and "lost" in during["causes"][0], "the slot view greys the lost TaskManager"
    assert json_lines(ended) == {"state": "FINISHED", "rows": 180, "spark": []}, "nothing on the way imported PySpark"
    [copy] = copies(replayed)
    assert copy["state"] == "FINISHED" and copy["restarts"] == 1 and copy["rows"] == 100

    assert error_of(refused).ename == "FlinkError"
    assert f"{bad}, line 3: unknown kind 'video'" in error_of(refused).evalue


def test_recordings_made_in_a_notebook_replay_the_rows_and_cancelled_jobs_leave_their_copy(cluster, tmp_path):
    recorded_file, midway_file, sql_file = tmp_path / "recorded.jsonl", tmp_path / "midway.jsonl", tmp_path / "sql.jsonl"
    nb = execute(code_notebook(
        f"%load_ext kernel_magics\n%flink connect {cluster.url} --token-file {cluster.token_file}",
        f"%%flink --name recorded --parallelism 1 --record {recorded_file} -o live_rows\n"
        + SEQ.format(rows="number_of_rows=1500, ", rate=300),
        "%%flink --name ticking --parallelism 1\n" + SEQ.format(rows="", rate=100),
        "from kernel_magics import current_session\n"
        "from tests.helpers.clusters import wait_until\n"
        "from tests.helpers.live_checks import report\n"
        "recorded, ticking = list(current_session().jobs.values())[-2:]\n"
        "wait_until(lambda: ticking.rows_total >= 50, 180, 'rows of the ticking job')\n"
        "ticking_id = ticking.job_id",
        f"%flink record {{ticking_id[:8]}} {midway_file}",
        "wait_until(lambda: ticking.rows_total >= 150 and recorded.finished.is_set(), 180, 'rows, and the end')\n"
        "wait_until(lambda: current_session().recorders[recorded.job_id].finished.is_set(), 60, 'the recording')\n"
        "%flink cancel {ticking_id}",
        f"%flink replay {recorded_file} --speed 20 --wait -o replayed",
        "report(live=len(live_rows), same=bool(live_rows.equals(replayed)))",
        NUMBERS,
        f"%%flink sql --wait --result-mode changelog --record {sql_file} -o live_sql\n"
        "SELECT n % 4 AS k, COUNT(*) AS c FROM numbers GROUP BY n % 4",
        f"%flink replay {sql_file} --speed 50 --wait -o replayed_sql",
        "view = current_session().replays[-1]\n"
        "report(live=live_sql.sort_values('k').to_dict('records'), mode=view.mode,\n"
        "       replayed=replayed_sql.sort_values('k').to_dict('records'))",
    ), timeout=300, save_to=tmp_path / "record.ipynb")
    (_, recorded_cell, ticking_cell, _, recording_cell, cancel_cell, replay_cell, compared,
     _, _, sql_replay_cell, sql_compared) = nb.cells
    assert all(error_of(c) is None for c in nb.cells), [text_of(c) for c in nb.cells if error_of(c)]

    recording = read(recorded_file)
    assert recording.name == "recorded" and recording.complete and recording.lines[-1]["state"] == "FINISHED"
    rows = pa.concat_tables([line["table"] for line in recording.lines if line["kind"] == "rows"])
    assert rows.column("seq").to_pylist() == list(range(1500))
    assert json_lines(compared) == {"live": 1500, "same": True}, "the replay gives back every row, in order"

    midway = read(midway_file)
    assert "recording job " in text_of(recording_cell) and "until it ends" in text_of(recording_cell)
    assert [line["kind"] for line in midway.lines[:2]] == ["message", "job"]
    assert midway.lines[1]["details"]["state"] == "RUNNING", "a recording begun midway starts from the job's state"
    first_rows = next(line for line in midway.lines if line["kind"] == "rows")
    assert first_rows["offset"] == 0 and first_rows["table"].column("seq")[0].as_py() == 0, "rows from the first"
    assert midway.complete and midway.lines[-1]["state"] == "CANCELED"

    assert [c["state"] for c in copies(recorded_cell)] == ["FINISHED"]
    assert [c["state"] for c in copies(ticking_cell)] == ["CANCELED"], "the cancel cell left the copy"
    assert f"job {midway.job_id}: CANCELED" in text_of(cancel_cell)
    [replayed] = copies(replay_cell)
    assert replayed["state"] == "FINISHED" and replayed["results"] == ["seq"] and replayed["rows"] == 100

    sql = json_lines(sql_compared)
    assert sql["live"] == [{"k": k, "c": 10} for k in range(4)] and sql["replayed"] == sql["live"]
    assert sql["mode"] == "changelog", "a SQL query replays in the view and result mode it was shown in"
    assert read(sql_file).header["view"]["statement"].startswith("SELECT n % 4") and copies(sql_replay_cell)


def test_a_running_jobs_view_leaves_its_copy_when_the_kernel_shuts_down(cluster):
    env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1", PYTHONPATH=str(REPO))
    with started_kernel(env) as (km, kc):
        kc.execute_interactive(f"%load_ext kernel_magics\n%flink connect {cluster.url} --token-file "
                               f"{cluster.token_file}", timeout=60, output_hook=lambda msg: None)
        kc.execute_interactive("%%flink --name until-shutdown --parallelism 1\n" + SEQ.format(rows="", rate=50),
                               timeout=120, output_hook=lambda msg: None)
        job = wait_until(lambda: next((j for j in cluster.client.jobs() if j["name"] == "until-shutdown"
                                       and j["state"] == "RUNNING"), None), 120, "the job running")
        try:
            kc.shutdown()
            update = wait_until(lambda: _copy_update(kc), 60, "the static copy sent at shutdown")
        finally:
            cluster.client.job(job["jid"]).cancel()
    html = update["content"]["data"]["text/html"]
    assert static_copy(html)["state"] == "RUNNING" and "made when the kernel stopped" in html


def _copy_update(kc):
    """The next IOPub message that fills a static copy, or None when none came within a second."""
    try:
        msg = kc.get_iopub_msg(timeout=1)
    except Exception:  # queue.Empty: nothing yet
        return None
    transient = msg["content"].get("transient") or {}
    if msg["msg_type"] == "update_display_data" and transient.get("display_id", "").startswith("flinkbench-static-"):
        return msg
    return None
