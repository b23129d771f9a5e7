"""%%flink sql cells in a real kernel: result modes, -o, EXPLAIN, shared catalog, and ten error cases."""
from __future__ import annotations

import pytest

from tests.helpers.notebooks import code_notebook, error_of, execute, json_lines, text_of, widget_views

pytestmark = pytest.mark.slow

ORDERS = """%%flink sql
CREATE TABLE orders (id BIGINT, product STRING, amount INT, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH ('connector' = 'datagen', 'number-of-rows' = '600', 'rows-per-second' = '100000', 'event-rate' = '100',
        'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.amount.min' = '1', 'fields.amount.max' = '9',
        'fields.product.values' = 'apple,pear,plum');
SHOW TABLES;
DESCRIBE orders"""

LAST_VIEW = ("from kernel_magics import current_session\n"
             "from tests.helpers.live_checks import report\n"
             "view = list(current_session().jobs.values())[-1]\n")


def test_sql_cells_in_each_result_mode_with_output_variable_and_explain(cluster, tmp_path):
    nb = execute(code_notebook(
        "%load_ext kernel_magics",
        f"%flink connect {cluster.url} --token-file {cluster.token_file}",
        ORDERS,
        "%%flink sql --wait --result-mode table -o by_product\n"
        "SELECT product, COUNT(*) AS n, SUM(amount) AS total FROM orders GROUP BY product",
        LAST_VIEW + "report(rows=view.rows_shown(), changes=len(view.changelog_rows), "
                    "out=by_product.sort_values('product').to_dict('records'))",
        "%%flink sql --wait --result-mode changelog --parallelism 1\n"
        "SELECT product, COUNT(*) AS n FROM orders WHERE id <= 6 GROUP BY product",
        LAST_VIEW + "report(rows=view.rows_shown())",
        "%%flink sql --wait\nSET 'sql-client.execution.result-mode' = 'tableau';\n"
        "SELECT window_start, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE orders, DESCRIPTOR(ts), INTERVAL '2' SECOND))\n"
        "GROUP BY window_start, window_end",
        LAST_VIEW + "report(text=view.text.value, mode=view.mode)",
        "%%flink sql\nEXPLAIN SELECT product, MAX(amount) FROM orders GROUP BY product",
        "%%flink --wait\n"
        "t = t_env.sql_query('SELECT id, amount FROM orders WHERE id <= 3')\n"
        "t_env.to_data_stream(t).collect()",
    ), timeout=420, save_to=tmp_path / "sql-modes.ipynb")
    cells = nb.cells[2:]
    assert all(error_of(c) is None for c in cells), [text_of(c) for c in cells if error_of(c)]
    ddl, table_mode, table_check, changelog_mode, changelog_check, tableau_mode, tableau_check, explained, stream = cells

    assert "orders" in text_of(ddl) and "*ROWTIME*" in text_of(ddl)
    seen = json_lines(table_check)
    assert sorted(r["product"] for r in seen["rows"]) == ["apple", "pear", "plum"], "materialised: one row per key"
    assert sum(r["n"] for r in seen["out"]) == 600 and seen["changes"] >= 3
    assert [r["product"] for r in seen["out"]] == ["apple", "pear", "plum"]
    assert len(widget_views(table_mode)) == 1

    ops = [r["op"] for r in json_lines(changelog_check)["rows"]]
    assert ops and set(ops) <= {"+I", "-U", "+U"} and ops[0] == "+I"
    text = json_lines(tableau_check)
    assert text["mode"] == "tableau" and "| op |" in text["text"].replace("  ", " ") or "op" in text["text"]
    assert "window_start" in text["text"] and "+I" in text["text"]
    shown = text_of(explained)
    assert "== Optimized Logical Plan ==" in shown and "GroupAggregate" in shown and "ExecutionGraph" in shown
    assert len(widget_views(stream)) == 1


ERRORS = [
    ("SELEC 1", "unknown statement 'SELEC'"),
    ("SELECT nope FROM orders", "line 1, column 8: column 'nope' not found"),
    ("SELECT *\nFROM missing", "line 2, column 6: table or view 'missing' does not exist"),
    ("SELECT * FROM orders MATCH_RECOGNIZE (PARTITION BY id)", "MATCH_RECOGNIZE is not supported"),
    ("SELECT product, amount FROM orders GROUP BY product", "'amount' must be in GROUP BY"),
    ("CREATE TABLE k (a INT) WITH ('connector' = 'kafka')", "connector 'kafka' is not available"),
    ("CREATE TABLE d (a INT) WITH ('connector' = 'datagen', 'rows-per-sec' = '1')", "unsupported option 'rows-per-sec'"),
    ("SET 'sql-client.execution.result-mode' = 'grid'", "must be one of table, changelog, tableau"),
    ("SELECT 'unclosed FROM orders", "not closed"),
    ("SELECT * FROM TABLE(TUMBLE(TABLE orders, DESCRIPTOR(product), INTERVAL '1' SECOND))", "needs a time attribute"),
]


def test_ten_sql_errors_are_one_line_with_position(cluster, tmp_path):
    nb = execute(code_notebook(
        "%load_ext kernel_magics",
        f"%flink connect {cluster.url} --token-file {cluster.token_file}",
        ORDERS,
        *[f"%%flink sql\n{text}" for text, _ in ERRORS],
        "%flink sql",
    ), timeout=240, allow_errors=True, save_to=tmp_path / "sql-errors.ipynb")
    cells = nb.cells[3:]
    for cell, (text, words) in zip(cells, ERRORS):
        err = error_of(cell)
        assert err is not None and err.ename == "SqlCellError", (text, text_of(cell))
        assert words in text_of(cell), (text, text_of(cell))
        assert len(err.traceback) == 1, "one line, no stack"
    assert "cell magic" in text_of(cells[-1])
