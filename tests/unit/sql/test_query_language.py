"""Planning the rest of Flink's query language without a cluster: subqueries into joins, set operations into one
aggregation, grouping sets into an Expand, FILTER, named windows, rank ranges, and Flink's arithmetic and casts."""
import pytest
import sqlglot

from runtime.api.environment import StreamExecutionEnvironment
from runtime.table import StreamTableEnvironment
from runtime.sql.dialect import Flink
from runtime.sql.errors import UnsupportedSqlError
from runtime.sql.functions import to_spark
from runtime.sql.session_zone import planning_in
from runtime.sql.typing import flink_expression, infer_type

ORDERS = """CREATE TABLE orders (id INT, customer INT, qty INT, price DECIMAL(10, 2), ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH ('connector' = 'datagen', 'number-of-rows' = '10')"""
CUSTOMERS = "CREATE TABLE customers (cid INT, name STRING) WITH ('connector' = 'datagen', 'number-of-rows' = '5')"


@pytest.fixture
def t_env():
    t_env = StreamTableEnvironment.create(StreamExecutionEnvironment())
    t_env.execute_sql(ORDERS)
    t_env.execute_sql(CUSTOMERS)
    return t_env


def plan(t_env, query):
    return t_env.explain_sql(query).split("== Optimized Execution Plan ==")[0]


@pytest.mark.parametrize("query, expected", [
    ("SELECT id FROM orders WHERE customer IN (SELECT cid FROM customers)", "Join(joinType=[SEMI], on=[customer = "),
    ("SELECT id FROM orders WHERE customer NOT IN (SELECT cid FROM customers)",
     "Join(joinType=[ANTI], on=[], nullAware=[customer = __sq1_value])"),
    ("SELECT name FROM customers AS c WHERE EXISTS (SELECT * FROM orders AS o WHERE o.customer = c.cid)",
     "Join(joinType=[SEMI], on=[cid = __sq1_key0])"),
    ("SELECT c.name, (SELECT COUNT(*) FROM orders AS o WHERE o.customer = c.cid) AS n FROM customers AS c",
     "Join(joinType=[LEFT], on=[cid = __sq1_key0])"),
    ("SELECT customer FROM orders INTERSECT ALL SELECT cid FROM customers", "GroupAggregate(groupBy=[customer], "
                                                                           "select=[sum(__cl) AS __cl, sum(__cr)"),
    ("SELECT customer, COUNT(*) FROM orders GROUP BY ROLLUP (customer)", "groupBy=[customer, __gid]"),
    ("SELECT COUNT(*) FILTER (WHERE qty > 0) AS n FROM orders", "CASE WHEN `qty` > 0 THEN 1 END"),
    ("SELECT id, SUM(qty) OVER w AS s FROM orders WINDOW w AS (PARTITION BY customer ORDER BY ts ROWS BETWEEN 2 "
     "PRECEDING AND CURRENT ROW)", "OverAggregate(partitionBy=[customer], orderBy=[ts], ROWS 2 PRECEDING"),
    ("SELECT id FROM (SELECT id, ROW_NUMBER() OVER (PARTITION BY customer ORDER BY qty DESC) AS rn FROM orders) "
     "WHERE rn BETWEEN 2 AND 3", "rankRange=[2..3]"),
    ("SELECT id, ts FROM orders ORDER BY ts", "TemporalSort(orderBy=[ts ASC])"),
])
def test_the_query_language_plans_as_flink_plans_it(t_env, query, expected):
    assert expected in plan(t_env, query)


@pytest.mark.parametrize("query, words", [
    ("SELECT id, LEAD(qty) OVER (PARTITION BY customer ORDER BY ts) FROM orders", "LEAD is not supported"),
    ("SELECT name FROM customers AS c WHERE EXISTS (SELECT * FROM orders AS o WHERE o.customer > c.cid)",
     "correlated condition"),
    ("SELECT window_start, SUM(DISTINCT qty) FROM TABLE(TUMBLE(TABLE orders, DESCRIPTOR(ts), INTERVAL '1' SECOND)) "
     "GROUP BY window_start, window_end", r"SUM\(DISTINCT ...\) is not supported here"),
    ("SELECT id, qty, SUM(qty) OVER (PARTITION BY customer ORDER BY ts), COUNT(*) OVER (ORDER BY ts) FROM orders",
     "all OVER windows of a query must be the same"),
])
def test_what_does_not_run_is_refused_by_name(t_env, query, words):
    with pytest.raises(UnsupportedSqlError, match=words):
        t_env.sql_query(query)


COLUMNS = {"a": "INT", "b": "BIGINT", "m": "DECIMAL(10,3)", "d": "DOUBLE", "s": "STRING", "ts": "TIMESTAMP",
           "l": "TIMESTAMP_LTZ", "f": "BOOLEAN"}


@pytest.mark.parametrize("flink, spark, type_", [
    ("a / a", "CAST((a DIV a) AS INT)", "INT"),
    ("b / a", "CAST((b DIV a) AS BIGINT)", "BIGINT"),
    ("a / 2.0", "a / 2.0", "DECIMAL(17,6)"),
    ("m / 3", "m / CAST(3 AS INT)", "DECIMAL(21,14)"),
    ("m * m", "m * m", "DECIMAL(20,6)"),
    ("FLOOR(d)", "CAST(FLOOR(d) AS DOUBLE)", "DOUBLE"),
    ("CEIL(d) / 2", "CAST(CEIL(d) AS DOUBLE) / 2", "DOUBLE"),
    ("EXTRACT(SECOND FROM ts) / 15", "CAST((SECOND(ts) DIV 15) AS BIGINT)", "BIGINT"),
    ("FLOOR(ts TO MINUTE)", "DATE_TRUNC('MINUTE', ts)", "TIMESTAMP"),
    ("CAST(ts AS STRING)", "DATE_FORMAT(ts, 'yyyy-MM-dd HH:mm:ss.SSS')", "STRING"),
    ("CAST(f AS STRING)", "UPPER(CAST(f AS STRING))", "STRING"),
    ("TRY_CAST(s AS INT)", "CAST(s AS INT)", "INT"),
])
def test_expressions_compute_what_flink_computes(flink, spark, type_):
    rewritten = flink_expression(sqlglot.parse_one(flink, read=Flink), COLUMNS)
    assert to_spark(rewritten, COLUMNS) == spark and infer_type(rewritten, COLUMNS) == type_


def test_a_cast_of_a_string_that_does_not_convert_fails_the_query():
    sql = to_spark(flink_expression(sqlglot.parse_one("CAST(s AS INT)", read=Flink), COLUMNS))
    assert sql.startswith("CASE WHEN s IS NULL OR NOT CAST(s AS INT) IS NULL THEN CAST(s AS INT) ELSE RAISE_ERROR(")


def test_timestamp_ltz_fields_are_read_in_the_session_zone():
    with planning_in("Europe/Berlin"):
        hour = to_spark(flink_expression(sqlglot.parse_one("HOUR(l)", read=Flink), COLUMNS))
        instant = to_spark(flink_expression(sqlglot.parse_one("CAST(ts AS TIMESTAMP_LTZ(3))", read=Flink), COLUMNS))
    assert hour == "HOUR(FROM_UTC_TIMESTAMP(l, 'Europe/Berlin'))"
    assert instant == "CAST(TO_UTC_TIMESTAMP(ts, 'Europe/Berlin') AS TIMESTAMP_LTZ)"
    assert to_spark(flink_expression(sqlglot.parse_one("HOUR(l)", read=Flink), COLUMNS)) == "HOUR(l)", "UTC: as is"


def test_a_computed_column_divides_and_types_as_flink():
    t_env = StreamTableEnvironment.create(StreamExecutionEnvironment())
    t_env.execute_sql("CREATE TABLE q (a INT, b BIGINT, part AS a / 4, ratio AS b / 2.0) "
                      "WITH ('connector' = 'datagen', 'number-of-rows' = '3')")
    part, ratio = (t_env.catalog.require("q").column(name) for name in ("part", "ratio"))
    assert (part.type, part.expr) == ("INT", "CAST((a DIV 4) AS INT)")
    assert ratio.type == "DECIMAL(26,6)"


def test_statistical_aggregates_reduce_to_sums_and_counts_typed_as_avg(t_env):
    table = t_env.sql_query("SELECT customer, STDDEV_POP(qty) AS s, VAR_SAMP(price) FILTER (WHERE qty > 0) AS v "
                            "FROM orders GROUP BY customer")
    assert table.get_schema() == [("customer", "INT"), ("s", "INT"), ("v", "DECIMAL(38,6)")]
    shown = plan(t_env, "SELECT customer, VAR_POP(qty) AS v FROM orders GROUP BY customer")
    assert "sum(" in shown and "count(" in shown and "VAR" not in shown.split("== Optimized Physical Plan ==")[1]
    with pytest.raises(UnsupportedSqlError, match=r"STDDEV_POP\(DISTINCT ...\) is not supported"):
        t_env.sql_query("SELECT STDDEV_POP(DISTINCT qty) FROM orders")
