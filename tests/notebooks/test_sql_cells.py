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
    assert "== Optimized Physical Plan ==" in shown and "GroupAggregate" in shown and "ExecutionGraph" in shown
    assert len(widget_views(stream)) == 1


ERRORS = [
    ("SELEC 1", "unknown statement 'SELEC'"),
    ("SELECT nope FROM orders", "line 1, column 8: column 'nope' not found"),
    ("SELECT *\nFROM missing", "line 2, column 6: table or view 'missing' does not exist"),
    ("SELECT * FROM orders MATCH_RECOGNIZE (PARTITION BY id)", "MATCH_RECOGNIZE must be ORDER BY the time attribute"),
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


EVENTS_QUERY = ("SELECT window_start, window_end, COUNT(*) AS n, MAX(ts) AS last_ts FROM TABLE(TUMBLE(TABLE events, "
                "DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY window_start, window_end")


def test_a_sql_cells_frame_has_plain_datetime64_columns_with_flinks_values(cluster, tmp_path):
    """Item 4 of issue 31: ``-o df`` holds TIMESTAMP columns as plain datetime64, the values Apache Flink gives."""
    import concurrent.futures
    import datetime

    from tests.helpers.flink_sql import flink_answers

    (tmp_path / "events").mkdir()
    base = datetime.datetime(2024, 5, 1, 8, 0, 0)
    times = [base + datetime.timedelta(milliseconds=730 * i + (i % 3) * 90) for i in range(30)]
    (tmp_path / "events" / "events.csv").write_text("".join(f"{i},{t:%Y-%m-%d %H:%M:%S}.{t.microsecond // 1000:03d}\n"
                                                            for i, t in enumerate(times)))
    ddl = (f"CREATE TABLE events (id INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH "
           f"('connector' = 'filesystem', 'path' = '{tmp_path / 'events'}', 'format' = 'csv')")
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        flink = pool.submit(flink_answers, [ddl], {"windows": EVENTS_QUERY}, tmp_path / "pyflink")
        nb = execute(code_notebook(
            "%load_ext kernel_magics",
            f"%flink connect {cluster.url} --token-file {cluster.token_file}",
            f"%%flink sql\n{ddl}",
            f"%%flink sql --wait -o windows\n{EVENTS_QUERY}",
            "from tests.helpers.live_checks import report\n"
            "report(dtypes={c: str(t) for c, t in windows.dtypes.items()}, "
            "rows=[[v.isoformat() if hasattr(v, 'isoformat') else v for v in r] for r in windows.itertuples(index=False)])",
        ), timeout=300, save_to=tmp_path / "sql-timestamps.ipynb")
        answer = flink.result()["windows"]
    cells = nb.cells[2:]
    assert all(error_of(c) is None for c in cells), [text_of(c) for c in cells if error_of(c)]
    seen = json_lines(cells[-1])
    assert seen["dtypes"] == {"window_start": "datetime64[ns]", "window_end": "datetime64[ns]", "n": "int64",
                              "last_ts": "datetime64[ns]"}
    ours = sorted(tuple(r) for r in seen["rows"])
    flinks = sorted(tuple(v.isoformat() if isinstance(v, datetime.datetime) else v for v in r) for r in answer["rows"])
    assert "error" not in answer and len(flinks) >= 5 and ours == flinks
