"""Bad Python functions in %%flink sql cells of a real kernel: a function that raises, one that returns the wrong
type, a table function that raises, a call with the wrong number of arguments and a function whose module cannot
be imported each get a message naming the function and the cause; the cluster then runs the next cell, and the
README's cells of Python functions (its file added with %flink add-file, its %%flink sql cell as shown)."""
from __future__ import annotations

import pytest

from tests.helpers import readme
from tests.helpers.notebooks import code_notebook, error_of, execute, json_lines, text_of, widget_views

pytestmark = pytest.mark.slow

FUNCTIONS = '''from runtime.udf import udf, udtf

@udf(result_type="BIGINT")
def inverse(n):
    return 100 // n

@udf(result_type="BIGINT")
def wrong(n):
    return "many"

@udtf(result_types="STRING")
def broken_pieces(n):
    raise ValueError(f"no pieces of {n}")

for name, function in [("inverse", inverse), ("wrong", wrong), ("broken_pieces", broken_pieces)]:
    t_env.create_temporary_system_function(name, function)
'''
ROWS = "(VALUES (4), (0), (5)) AS t(n)"
CASES = {  # cell -> what its error says
    "raises": (f"%%flink sql --wait\nSELECT inverse(n) AS x FROM {ROWS}",
               "function inverse raised ZeroDivisionError: integer division or modulo by zero"),
    "wrong type": (f"%%flink sql --wait\nSELECT wrong(n) AS x FROM {ROWS}",
                   "function wrong returned 'many' (str) where its result type is BIGINT"),
    "table function raises": (f"%%flink sql --wait\nSELECT n, p FROM {ROWS}, LATERAL TABLE(broken_pieces(n)) AS P(p)",
                              "function broken_pieces raised ValueError: no pieces of "),
    "wrong arguments": (f"%%flink sql\nSELECT inverse(n, n) AS x FROM {ROWS}",
                        "function inverse cannot take 2 argument(s): too many positional arguments"),
    "module not importable": ("%%flink sql\nCREATE TEMPORARY FUNCTION f AS 'no_such_module.f' LANGUAGE PYTHON",
                              "function 'f': cannot import module 'no_such_module' (No module named "
                              "'no_such_module')"),
}
JOB_FAILURES = ("raises", "wrong type", "table function raises")


README_SECTION = "Python functions and dependencies"


@pytest.fixture(scope="module")
def cells(cluster, tmp_path_factory):
    folder = tmp_path_factory.mktemp("readme-functions")
    (folder / "my_functions.py").write_text(readme.code_blocks(README_SECTION)[0])  # the README's file of functions
    add_file, sql_cell = [c for c in readme.commands(README_SECTION) if c.startswith("%")]
    assert add_file == "%flink add-file my_functions.py", add_file
    nb = execute(code_notebook(
        "%load_ext kernel_magics",
        f"%flink connect {cluster.url} --token-file {cluster.token_file}",
        FUNCTIONS,
        *[cell for cell, _ in CASES.values()],
        "%%flink sql --wait -o after\nSELECT n, inverse(n) AS x FROM (VALUES (4), (5)) AS t(n)",
        "from tests.helpers.live_checks import report\nreport(rows=sorted(map(list, after.values.tolist())))",
        f"%flink add-file {folder / 'my_functions.py'}",
        sql_cell,
    ), timeout=900, allow_errors=True, save_to=tmp_path_factory.mktemp("nb") / "python-function-errors.ipynb")
    return dict(zip(["load", "connect", "functions", *CASES, "after", "check", "add file", "readme"], nb.cells))


@pytest.mark.parametrize("case", list(CASES))
def test_each_bad_function_is_named_with_its_cause(cells, case):
    cell = cells[case]
    err = error_of(cell)
    assert err is not None, text_of(cell)
    assert CASES[case][1] in text_of(cell), text_of(cell)
    if case in JOB_FAILURES:  # the job failed: its name and id, then the TaskManager's one line
        assert err.ename == "JobFailed" and "Traceback (most recent call last)" not in text_of(cell), text_of(cell)
    else:
        assert err.ename == "SqlCellError" and len(err.traceback) == 1, "one line, no stack"


def test_the_cluster_runs_the_next_cell(cells):
    for name in ("functions", "after", "check"):
        assert error_of(cells[name]) is None, text_of(cells[name])
    assert json_lines(cells["check"])["rows"] == [[4, 25], [5, 20]]


def test_the_readmes_python_functions_run_as_shown(cells):
    assert "ships with this kernel's jobs" in text_of(cells["add file"]), text_of(cells["add file"])
    cell = cells["readme"]
    assert error_of(cell) is None, text_of(cell)  # --wait: a job that failed would have raised here
    assert len(widget_views(cell)) == 2, "a live view per query, each job waited for to FINISHED"
