"""After a kernel restart: the job a previous kernel started still runs, '%flink jobs' lists it and
'%flink attach' brings back its live view and results (two kernels, one cluster started outside them)."""
from __future__ import annotations

import pytest

from tests.helpers.notebooks import code_notebook, error_of, execute, json_lines, text_of, widget_views

pytestmark = pytest.mark.slow


def test_a_new_kernel_lists_and_attaches_to_a_job_an_old_kernel_started(cluster, tmp_path):
    connect = f"%load_ext kernel_magics\n%flink connect {cluster.url} --token-file {cluster.token_file}"
    first = execute(code_notebook(
        connect,
        "%%flink --name survivor --parallelism 1\n"
        "env.datagen('seq BIGINT', rows_per_second=400, fields={'seq': {'kind': 'sequence'}}).collect()",
        "from kernel_magics import current_session\n"
        "from tests.helpers.clusters import wait_until\n"
        "from tests.helpers.live_checks import report\n"
        "view = list(current_session().jobs.values())[-1]\n"
        "wait_until(lambda: view.rows_total >= 50, 180, 'rows collected')\n"
        "report(job_id=view.job_id)",
    ), timeout=240, save_to=tmp_path / "first.ipynb")
    job_id = json_lines(first.cells[2])["job_id"]
    assert cluster.client.get(f"/jobs/{job_id}")["state"] in ("CREATED", "RUNNING"), "the job outlives its kernel"

    second = execute(code_notebook(
        connect,
        "%flink jobs --running",
        f"%flink attach {job_id[:10]} --max-rows 10",
        "from kernel_magics import current_session\n"
        "from tests.helpers.clusters import wait_until\n"
        "from tests.helpers.live_checks import report\n"
        f"view = current_session().jobs['{job_id}']\n"
        "wait_until(lambda: len(view.results.rows()) == 10, 180, 'rows in the attached view')\n"
        "report(rows=view.results.rows(), state=view.current_state(), start=view.start_offset)",
        f"%flink cancel {job_id} --show-api",
    ), timeout=300, allow_errors=True, save_to=tmp_path / "second.ipynb")
    connected, listed, attached, rows, cancelled = second.cells
    assert all(error_of(c) is None for c in second.cells), [text_of(c) for c in second.cells if error_of(c)]

    assert job_id in text_of(listed) and "survivor" in text_of(listed)
    assert len(widget_views(attached)) == 1
    seen = json_lines(rows)
    assert seen["state"] == "RUNNING"
    seqs = [r["seq"] for r in seen["rows"]]
    assert len(seqs) == 10 and seqs == sorted(seqs), "the newest rows, in order"
    assert seen["start"] >= 40, "attach reads from near the end of what was collected, not from row 0"

    shown = text_of(cancelled)
    assert f"REST: PATCH /jobs/{job_id}?mode=cancel" in shown
    assert f"CLI:  flinkbench cancel --jobmanager {cluster.url} --token-file {cluster.token_file} {job_id}" in shown
    assert f"job {job_id}: CANCELED" in shown
