"""Errors the magics show in a real kernel: each case as the notebook user sees it (nbclient)."""
from __future__ import annotations

import pytest

from tests.helpers.notebooks import code_notebook, error_of, execute, text_of

pytestmark = pytest.mark.slow


def test_cell_errors_point_at_the_cell_and_usage_errors_are_one_line(tmp_path):
    nb = execute(code_notebook(
        "%load_ext kernel_magics",
        "%%flink\nx = 1\ny = x / 0\n",
        "%%flink\nfor x in range(3)\n    pass\n",
        "%%flink\nevents = env.datagen('a INT', number_of_rows=10)\n",
        "%%flink\nenv.datagen('a INT', number_of_rows=10).collect()\n",
        "%flink bogus",
        "%flink help",
        "%%flink --mode sideways\nenv\n",
    ), allow_errors=True, timeout=120, save_to=tmp_path / "errors.ipynb")
    raising, syntax, no_sink, not_connected, unknown, helped, bad_option = nb.cells[1:]

    err = error_of(raising)
    assert err.ename == "ZeroDivisionError"
    shown = text_of(raising)
    assert "line 3" in shown and "y = x / 0" in shown, shown
    assert "kernel_magics" not in shown and "run_cell_magic" not in shown, "only the cell's own frames"

    shown = text_of(syntax)
    assert "SyntaxError" in shown and "line 2" in shown and "for x in range(3)" in shown, shown
    assert "kernel_magics" not in shown

    assert error_of(no_sink).ename == "FlinkError"
    assert "defines no sink" in text_of(no_sink) and ".collect()" in text_of(no_sink)
    assert len(error_of(no_sink).traceback) == 1, "one line, no stack"

    assert "not connected to a cluster" in text_of(not_connected) and "%flink local" in text_of(not_connected)
    assert "unknown subcommand 'bogus'" in text_of(unknown)
    assert error_of(helped) is None
    for name in ("local", "connect", "status", "jobs", "cancel", "savepoint", "stop-job", "kill", "attach", "dashboard"):
        assert f"\n  {name} " in text_of(helped), name
    assert "UsageError: argument --mode: invalid choice: 'sideways'" in text_of(bad_option)


def test_connect_checks_the_token_and_a_failed_job_shows_its_remote_traceback(cluster, tmp_path):
    wrong = "x" * 43
    nb = execute(code_notebook(
        "%load_ext kernel_magics",
        f"%flink connect {cluster.url} --token {wrong}",
        f"%flink connect {cluster.url}",
        f"%flink connect {cluster.url} --token-file {cluster.token_file} --show-api",
        "%%flink --wait --name doomed\n"
        "def boom(frame):\n"
        "    raise ValueError(f'bad batch of {len(frame)} rows')\n"
        "env.datagen('a INT', number_of_rows=10).map(boom, schema='a INT').collect()\n",
        "%flink savepoint no-such-job",
        "%flink kill taskmanager tm-none",
        "%flink disconnect",
    ), allow_errors=True, timeout=240, save_to=tmp_path / "connect.ipynb")
    refused, tokenless, connected, failed, unknown_job, unknown_tm, disconnected = nb.cells[1:]

    assert error_of(refused).ename == "FlinkError"
    assert "refused the token" in text_of(refused) and "missing or invalid cluster token" in text_of(refused)
    assert wrong not in "".join(o.get("text", "") for o in refused.outputs if o.output_type == "stream")
    assert "needs its token" in text_of(tokenless)

    assert error_of(connected) is None
    shown = text_of(connected)
    assert f"connected to {cluster.url}: 2 TaskManagers" in shown
    assert f"curl -X GET -H \"Authorization: Bearer $(cat {cluster.token_file})\" {cluster.url}/overview" in shown
    assert cluster.token not in shown, "the token itself is never printed"

    err = error_of(failed)
    assert err.ename == "JobFailed"
    shown = text_of(failed)
    assert "job 'doomed'" in shown and "Remote traceback" in shown
    assert "ValueError: bad batch of" in shown and "in boom" in shown, shown

    assert "no job 'no-such-job'" in text_of(unknown_job)
    assert "no live TaskManager 'tm-none'" in text_of(unknown_tm)
    assert f"disconnected from {cluster.url}" in text_of(disconnected)


def test_a_kernel_started_with_a_cluster_in_its_environment_connects_on_first_use(cluster, tmp_path):
    nb = execute(code_notebook("%load_ext kernel_magics", "%flink status"), timeout=60, save_to=tmp_path / "env.ipynb",
                 env={"FLINKBENCH_JOBMANAGER_URL": cluster.url, "FLINKBENCH_TOKEN_FILE": cluster.token_file})
    shown = text_of(nb.cells[1])
    assert error_of(nb.cells[1]) is None, shown
    assert f"connected to {cluster.url} (named by FLINKBENCH_JOBMANAGER_URL)" in shown
    assert "slots:" in shown and "TaskManager tm-" in shown
