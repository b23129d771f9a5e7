"""MATCH_RECOGNIZE planned without a cluster: the Match node, its measures, and what Flink refuses refused with
Flink's reason (each refusal below is what Apache Flink 2.3 answers for the same query)."""
import pytest

from runtime.api.environment import StreamExecutionEnvironment
from runtime.table import StreamTableEnvironment
from runtime.sql.errors import SqlValidationError, UnsupportedSqlError

TICKER = """CREATE TABLE ticker (symbol STRING, rowtime TIMESTAMP(3), price BIGINT, tax BIGINT,
  WATERMARK FOR rowtime AS rowtime - INTERVAL '1' SECOND) WITH ('connector' = 'datagen', 'number-of-rows' = '10')"""


@pytest.fixture
def t_env():
    t_env = StreamTableEnvironment.create(StreamExecutionEnvironment())
    t_env.execute_sql(TICKER)
    return t_env


def mr(pattern="A B", define="B AS B.price > A.price", measures="A.price AS a, B.price AS b", extra="",
       order="rowtime", partition="PARTITION BY symbol"):
    return f"SELECT * FROM ticker MATCH_RECOGNIZE ({partition} ORDER BY {order} MEASURES {measures} {extra} " \
           f"PATTERN ({pattern}) DEFINE {define}) AS T"


V_SHAPE = mr("START_ROW PRICE_DOWN+ PRICE_UP", "PRICE_DOWN AS (LAST(PRICE_DOWN.price, 1) IS NULL AND PRICE_DOWN.price "
             "< START_ROW.price) OR PRICE_DOWN.price < LAST(PRICE_DOWN.price, 1), PRICE_UP AS PRICE_UP.price > "
             "LAST(PRICE_DOWN.price, 1)", "START_ROW.rowtime AS start_tstamp, LAST(PRICE_DOWN.rowtime) AS "
             "bottom_tstamp, LAST(PRICE_UP.rowtime) AS end_tstamp", "ONE ROW PER MATCH AFTER MATCH SKIP TO LAST PRICE_UP")


def test_the_v_shape_query_plans_a_keyed_match_under_its_measures(t_env):
    text = t_env.explain_sql(V_SHAPE)
    assert "Match(partitionBy=[symbol], orderBy=[rowtime ASC], pattern=[START_ROW PRICE_DOWN+ PRICE_UP], " \
           "skip=[TO LAST PRICE_UP]" in text
    assert "[sql_match]" in text and "hash(symbol)" in text
    assert t_env.sql_query(V_SHAPE).get_schema() == [("symbol", "STRING"), ("start_tstamp", "TIMESTAMP"),
                                                     ("bottom_tstamp", "TIMESTAMP"), ("end_tstamp", "TIMESTAMP")]


def test_measures_keep_flinks_types_and_compute_over_navigations_in_spark(t_env):
    query = mr("A B+? C", "B AS B.price > A.price, C AS C.price < A.price",
               "AVG(B.price) AS av, COUNT(B.price) AS n, LAST(B.price * B.tax, 1) + 1 AS x, A.price - C.price AS d, "
               "SUM(CAST(B.price AS DOUBLE)) AS s")
    schema = dict(t_env.sql_query(query).get_schema())
    assert schema == {"symbol": "STRING", "av": "BIGINT", "n": "BIGINT", "x": "BIGINT", "d": "BIGINT", "s": "DOUBLE"}
    assert "`__m2` * `__m3` + 1 AS x" in t_env.explain_sql(query)


def test_match_rowtime_is_a_time_attribute_for_a_window_after_the_match(t_env):
    t_env.execute_sql("CREATE VIEW rises AS " + mr(measures="MATCH_ROWTIME() AS mt, A.price AS a"))
    text = t_env.explain_sql("SELECT window_start, COUNT(*) FROM TABLE(TUMBLE(TABLE rises, DESCRIPTOR(mt), "
                             "INTERVAL '5' SECOND)) GROUP BY window_start, window_end")
    assert "WindowAggregate" in text and "time=[mt]" in text


def test_a_match_without_partition_runs_under_one_key_and_extra_order_columns_are_kept(t_env):
    text = t_env.explain_sql(mr(partition="", order="rowtime, price DESC"))
    assert "Match(partitionBy=[], orderBy=[rowtime ASC, price DESC]" in text and "hash(__global)" in text


@pytest.mark.parametrize("query, error, words", [
    (mr("A*", "A AS A.price > 10"), UnsupportedSqlError, "patterns that can produce an empty match are not supported"),
    (mr("A B*"), UnsupportedSqlError, "greedy quantifiers are not allowed as the last element"),
    (mr("A B{2,3}"), UnsupportedSqlError, "greedy quantifiers are not allowed as the last element"),
    (mr("A B?? C"), UnsupportedSqlError, "reluctant optional variables are not supported yet"),
    (mr("A B{,2} C"), UnsupportedSqlError, r"Flink fails \{,m\}"),
    (mr("A (B | C)"), UnsupportedSqlError, r"groups of variables are not supported"),
    (mr("A B A"), SqlValidationError, "pattern variable A appears twice"),
    (mr(order="price"), UnsupportedSqlError, "must be ORDER BY the time attribute first, ascending"),
    (mr(order="rowtime DESC"), UnsupportedSqlError, "must be ORDER BY the time attribute first, ascending"),
    (mr(define="B AS B.price > PREV(B.price)"), UnsupportedSqlError, "Flink does not support physical offsets"),
    (mr(define="B AS SUM(A.price + B.price) > 10"), UnsupportedSqlError, "must reference one"),
    (mr(measures="CLASSIFIER() AS c"), UnsupportedSqlError, "CLASSIFIER"),
    (mr(measures="COUNT(DISTINCT B.price) AS c"), UnsupportedSqlError, "DISTINCT aggregates are not supported"),
    (mr(measures="A.price, B.price AS b"), SqlValidationError, "needs a name"),
    (mr(extra="ALL ROWS PER MATCH"), UnsupportedSqlError, "All rows per match mode is not supported yet"),
    (mr(extra="AFTER MATCH SKIP TO FIRST A"), UnsupportedSqlError, "Could not skip to first element of a match"),
    (mr(define="B AS Q.price > 1"), SqlValidationError, "'Q' is not a pattern variable"),
    (mr(define="B AS REVERSE(B.symbol) = 'x'"), UnsupportedSqlError, "REVERSE is not supported in MATCH_RECOGNIZE"),
])
def test_what_flink_refuses_is_refused_with_its_reason(t_env, query, error, words):
    with pytest.raises(error, match=words) as caught:
        t_env.sql_query(query)
    assert caught.value.line == 1


def test_a_define_for_a_variable_the_pattern_lacks_is_ignored_as_flink_does(t_env):
    assert "Match(" in t_env.explain_sql(mr(define="B AS B.price > A.price, Z AS Z.price > 1"))


def test_an_updating_input_is_refused(t_env):
    t_env.execute_sql("CREATE VIEW counts AS SELECT symbol, COUNT(*) AS n, MAX(rowtime) AS rowtime FROM ticker "
                      "GROUP BY symbol")
    with pytest.raises(UnsupportedSqlError, match="append-only input"):
        t_env.sql_query("SELECT * FROM counts MATCH_RECOGNIZE (ORDER BY rowtime MEASURES A.n AS n PATTERN (A) "
                        "DEFINE A AS A.n > 1)")
