"""Array expansion (CROSS JOIN UNNEST) planned without a cluster: the element's columns with Flink's names and types,
WITH ORDINALITY, LEFT JOIN ... ON TRUE, and the forms refused by name."""
import pytest

from runtime.api.environment import StreamExecutionEnvironment
from runtime.table import StreamTableEnvironment
from runtime.sql.errors import UnsupportedSqlError


@pytest.fixture
def t_env():
    t_env = StreamTableEnvironment.create(StreamExecutionEnvironment())
    t_env.execute_sql("CREATE TABLE o (id INT, p STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) "
                      "WITH ('connector' = 'datagen', 'number-of-rows' = '5')")
    t_env.execute_sql("CREATE VIEW v AS SELECT id, ts, ARRAY[p, UPPER(p)] AS arr, MAP[id, p] AS m FROM o")
    return t_env


@pytest.mark.parametrize("query, columns", [
    ("SELECT * FROM v CROSS JOIN UNNEST(arr)", [("EXPR$0", "STRING")]),
    ("SELECT * FROM v, UNNEST(arr) AS t", [("t", "STRING")]),
    ("SELECT * FROM v CROSS JOIN UNNEST(arr) AS t (w)", [("w", "STRING")]),
    ("SELECT * FROM v CROSS JOIN UNNEST(arr) WITH ORDINALITY AS t (w, n)", [("w", "STRING"), ("n", "INT")]),
    ("SELECT * FROM v CROSS JOIN UNNEST(m)", [("KEY", "INT"), ("VALUE", "STRING")]),
    ("SELECT * FROM v LEFT JOIN UNNEST(m) AS t (k, val) ON TRUE", [("k", "INT"), ("val", "STRING")]),
    ("SELECT * FROM v CROSS JOIN UNNEST(ARRAY[ROW(id, 'x'), ROW(id + 1, 'yz')])", [("EXPR$0", "INT"), ("EXPR$1", "STRING")]),
    ("SELECT * FROM v CROSS JOIN UNNEST(ARRAY[id, 7]) AS t (id)", [("id0", "INT")]),
])
def test_an_element_gives_columns_named_and_typed_as_in_flink(t_env, query, columns):
    schema = t_env.sql_query(query).get_schema()
    assert schema[:4] == [("id", "INT"), ("ts", "TIMESTAMP"), ("arr", "ARRAY<STRING>"), ("m", "MAP<INT,STRING>")]
    assert schema[4:] == columns


def test_the_expansion_keeps_the_time_attribute_and_reads_its_rows_outer_for_left(t_env):
    plan = t_env.explain_sql("SELECT w, window_start, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE v, DESCRIPTOR(ts), "
                             "INTERVAL '1' SECOND)) CROSS JOIN UNNEST(arr) AS t (w) GROUP BY w, window_start, window_end")
    assert "explode(transform(`arr`" in plan
    left = t_env.explain_sql("SELECT id, w FROM v LEFT JOIN UNNEST(arr) AS t (w) ON TRUE")
    assert "explode_outer(transform(`arr`" in left
    words = t_env.sql_query("SELECT ts, w FROM v CROSS JOIN UNNEST(arr) AS t (w)")
    t_env.create_temporary_view("words", words)
    windows = t_env.sql_query("SELECT window_start, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE words, DESCRIPTOR(ts), "
                              "INTERVAL '1' SECOND)) GROUP BY window_start, window_end")
    assert windows.get_schema() == [("window_start", "TIMESTAMP"), ("n", "BIGINT")]


@pytest.mark.parametrize("query, words", [
    ("SELECT * FROM v CROSS JOIN UNNEST(arr, arr)", "UNNEST of several arrays at once is not supported"),
    ("SELECT * FROM v JOIN UNNEST(arr) AS t (w) ON w = 'a'", "LEFT JOIN UNNEST\\(...\\) ON TRUE"),
    ("SELECT * FROM v CROSS JOIN UNNEST(id)", "UNNEST takes an ARRAY or a MAP, not INT"),
    ("SELECT * FROM v CROSS JOIN UNNEST(arr) AS t (a, b)", "UNNEST gives 1 columns here, the alias lists 2"),
])
def test_what_does_not_expand_is_refused_by_name(t_env, query, words):
    with pytest.raises(UnsupportedSqlError, match=words):
        t_env.sql_query(query)
