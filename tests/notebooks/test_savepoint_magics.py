"""Savepoints from the notebook: %flink savepoint, %flink stop-job --savepoint, and a %%flink cell that
resumes from the savepoint where the first run stopped."""
from __future__ import annotations

import pytest

from tests.helpers.notebooks import code_notebook, error_of, execute, json_lines, text_of

pytestmark = pytest.mark.slow

ROWS = 20_000
JOB = "env.datagen('seq BIGINT', number_of_rows={rows}, {rate}fields={{'seq': {{'kind': 'sequence'}}}}).{sink}()"


def test_savepoint_stop_and_resume_from_the_notebook(cluster, tmp_path):
    nb = execute(code_notebook(
        f"%load_ext kernel_magics\n%flink connect {cluster.url} --token-file {cluster.token_file}",
        "%%flink --name before --parallelism 1 --checkpoint-interval 1s -o first\n"
        + JOB.format(rows=ROWS, rate="rows_per_second=300, ", sink="collect"),
        "from kernel_magics import current_session\n"
        "from tests.helpers.clusters import wait_until\n"
        "from tests.helpers.live_checks import report\n"
        "view = list(current_session().jobs.values())[-1]\n"
        "wait_until(lambda: view.rows_total >= 300, 180, 'rows before the savepoint')\n"
        "job_id = view.job_id",
        "%flink savepoint {job_id[:8]}",
        "location = %flink stop-job {job_id} --savepoint --show-api\n"
        "view.wait()\n"
        "report(location=location, first_rows=len(first))",
        "%%flink --name after --parallelism 1 --from-savepoint {location} --wait\n"
        + JOB.format(rows=ROWS, rate="", sink="blackhole"),
        "client = current_session().client\n"
        "resumed = list(current_session().jobs)[-1]\n"
        "source = client.get(f'/jobs/{resumed}')['vertices'][0]['subtasks'][0]['metrics']\n"
        "restored = client.get(f'/jobs/{resumed}/checkpoints')['latest']['restored']\n"
        "report(first=len(first), first_max=int(first['seq'].max()), resumed_read=source['records_in'],\n"
        "       restored_from=restored['external_path'])",
    ), timeout=300, save_to=tmp_path / "savepoints.ipynb")
    (_, _, _, savepoint, stopped, resumed, combined) = nb.cells
    assert all(error_of(c) is None for c in nb.cells)

    assert "triggered" in text_of(savepoint) and "'file://" in text_of(savepoint), "the location is the result"
    shown = text_of(stopped)
    assert "REST: POST /jobs/" in shown and '"targetDirectory": null' in shown and ": FINISHED" in shown
    assert f"CLI:  flinkbench stop --jobmanager {cluster.url} --token-file {cluster.token_file} " in shown
    location = json_lines(stopped)["location"]
    assert location.startswith("file://") and location not in text_of(savepoint), "a second, newer savepoint"

    result = json_lines(combined)
    assert result["restored_from"] == location, "the resumed job started from the stop savepoint"
    assert result["first"] == result["first_max"] + 1, "the first run delivered seq 0.. up to its savepoint"
    assert result["first"] + result["resumed_read"] == ROWS, "the resumed source read exactly the rest"
