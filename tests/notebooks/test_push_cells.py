"""A later cell feeds the push source of the job a '%%flink' cell started, through 'last_job'."""
from __future__ import annotations

import pytest

from tests.helpers.notebooks import code_notebook, error_of, execute, json_lines, text_of

pytestmark = pytest.mark.slow


def test_a_later_cell_pushes_rows_into_the_job_and_closes_its_source(cluster, tmp_path):
    nb = execute(code_notebook(
        f"%load_ext kernel_magics\n%flink connect {cluster.url} --token-file {cluster.token_file}",
        "%%flink --name pushed --parallelism 2\n"
        "env.push_source('n BIGINT', name='numbers').with_columns(twice='n * 2').collect()",
        "import pandas as pd\n"
        "from tests.helpers.live_checks import report\n"
        "last_job.push('numbers', [{'n': 1}, {'n': 2}])\n"
        "last_job.push('numbers', pd.DataFrame({'n': [3]}))\n"
        "last_job.close_source('numbers')\n"
        "report(job_id=last_job.job_id, state=last_job.wait(180))",
    ), timeout=300, save_to=tmp_path / "push.ipynb")
    assert all(error_of(c) is None for c in nb.cells), [text_of(c) for c in nb.cells if error_of(c)]
    seen = json_lines(nb.cells[2])
    assert seen["state"] == "FINISHED"
    rows = cluster.client.job(seen["job_id"]).results(timeout=60).to_pylist()
    assert sorted((r["n"], r["twice"]) for r in rows) == [(1, 2), (2, 4), (3, 6)]
