"""The jdbc connector without a database: its options (Flink's names and rules), how a statement plans with it
(scan splits, upsert sink hashed by its key, lookup joins), and its changelog compaction."""
from __future__ import annotations

import pyarrow as pa
import pytest

from runtime.api.environment import StreamExecutionEnvironment
from runtime.table import StreamTableEnvironment
from runtime.connectors.jdbc import JdbcConnectionOptions, JdbcSink, JdbcSource
from runtime.connectors.jdbc.changes import changes
from runtime.connectors.jdbc.options import partition_ranges
from runtime.sql.errors import SqlValidationError, UnsupportedSqlError

URL = "'url' = 'jdbc:postgresql://127.0.0.1:5432/shop', 'username' = 'app', 'password' = 'pw'"
ORDERS = f"""CREATE TABLE orders (id BIGINT, customer INT, amount DOUBLE, proc_time AS PROCTIME())
  WITH ('connector' = 'jdbc', {URL}, 'table-name' = 'orders', 'scan.partition.column' = 'id',
        'scan.partition.num' = '4', 'scan.partition.lower-bound' = '1', 'scan.partition.upper-bound' = '10')"""
CUSTOMERS = f"""CREATE TABLE customers (id INT, name STRING, PRIMARY KEY (id) NOT ENFORCED)
  WITH ('connector' = 'jdbc', {URL}, 'table-name' = 'public.customers', 'lookup.cache.max-rows' = '100',
        'lookup.cache.ttl' = '2 s')"""
TOTALS = f"""CREATE TABLE totals (customer INT, total DOUBLE, PRIMARY KEY (customer) NOT ENFORCED)
  WITH ('connector' = 'jdbc', {URL}, 'table-name' = 'totals')"""
LOG = f"CREATE TABLE log (id BIGINT, amount DOUBLE) WITH ('connector' = 'jdbc', {URL}, 'table-name' = 'log')"


@pytest.fixture
def t_env():
    t_env = StreamTableEnvironment.create(StreamExecutionEnvironment())
    for ddl in (ORDERS, CUSTOMERS, TOTALS, LOG):
        t_env.execute_sql(ddl)
    return t_env


def test_the_scan_is_cut_into_flinks_inclusive_ranges():
    assert partition_ranges({"column": "id", "num": 4, "lower": 1, "upper": 10}) == [(1, 3), (4, 6), (7, 8), (9, 10)]
    assert partition_ranges({"column": "id", "num": 8, "lower": 1, "upper": 3}) == [(1, 1), (2, 2), (3, 3)]
    assert partition_ranges(None) == [None]


def test_an_upsert_sink_hashes_by_its_key_and_an_append_sink_refuses_updates(t_env):
    text = t_env.explain_sql("INSERT INTO totals SELECT customer, SUM(amount) FROM orders GROUP BY customer")
    assert "Sink: totals" in text and "hash(customer)" in text
    with pytest.raises(UnsupportedSqlError, match=r"table sink 'log' \(jdbc\) does not support consuming the update"):
        t_env.explain_sql("INSERT INTO log SELECT customer, SUM(amount) FROM orders GROUP BY customer")


def test_sink_parallelism_sets_the_sinks_parallelism(t_env):
    t_env.execute_sql(f"CREATE TABLE few (customer INT, total DOUBLE, PRIMARY KEY (customer) NOT ENFORCED) WITH "
                      f"('connector' = 'jdbc', {URL}, 'table-name' = 'few', 'sink.parallelism' = '1')")
    text = t_env.explain_sql("INSERT INTO few SELECT customer, SUM(amount) FROM orders GROUP BY customer")
    assert "'Sink: few' x1" in text


def test_a_lookup_join_plans_into_one_chained_operator_with_the_tables_cache(t_env):
    query = ("SELECT o.id, c.name FROM orders AS o JOIN customers FOR SYSTEM_TIME AS OF o.proc_time AS c "
             "ON o.customer = c.id")
    text = t_env.explain_sql(query)
    assert "LookupJoin(table=[customers], joinType=[INNER], on=[customer = id])" in text
    assert "[sql_lookup_join]" in text


def test_a_temporal_join_as_of_event_time_needs_a_versioned_table(t_env):
    t_env.execute_sql("CREATE TABLE clicks (customer INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) "
                      "WITH ('connector' = 'datagen')")
    with pytest.raises(UnsupportedSqlError, match="'customers' is not a versioned table"):
        t_env.explain_sql("SELECT * FROM clicks AS k JOIN customers FOR SYSTEM_TIME AS OF k.ts AS c "
                          "ON k.customer = c.id")


@pytest.mark.parametrize("query, words", [
    ("SELECT * FROM orders AS o JOIN orders FOR SYSTEM_TIME AS OF o.proc_time AS p ON o.id = p.id", None),
    ("SELECT * FROM orders AS o FULL JOIN customers FOR SYSTEM_TIME AS OF o.proc_time AS c ON o.customer = c.id",
     "INNER or LEFT"),
    ("SELECT * FROM orders AS o JOIN customers FOR SYSTEM_TIME AS OF o.proc_time AS c ON o.amount > 1",
     "needs an equality"),
    ("SELECT * FROM orders AS o LEFT JOIN customers FOR SYSTEM_TIME AS OF o.proc_time AS c "
     "ON o.customer = c.id AND c.name = 'x'", "may only have equalities"),
])
def test_lookup_joins_flink_refuses_are_refused_by_name(t_env, query, words):
    if words is None:  # orders is a jdbc table too: it can be looked up
        assert "LookupJoin(table=[orders]" in t_env.explain_sql(query)
        return
    with pytest.raises(UnsupportedSqlError, match=words):
        t_env.explain_sql(query)


@pytest.mark.parametrize("options, words", [
    ("'table-name' = 't'", "needs a 'url' option"),
    (f"{URL}", "needs a 'table-name' option"),
    ("'url' = 'jdbc:mysql://h/db', 'table-name' = 't'", "option 'url' must be a PostgreSQL JDBC URL"),
    (f"{URL}, 'table-name' = 't', 'scan.partition.column' = 'id'", "must all be given together; missing "
                                                                   "'scan.partition.num'"),
    (f"{URL}, 'table-name' = 't', 'lookup.cache.ttl' = '1 s'", "must both be given"),
    (f"{URL}, 'table-name' = 't', 'sink.buffer-flush.max-row' = '1'", "unsupported option 'sink.buffer-flush.max-row'"),
])
def test_jdbc_options_are_checked_as_flink_checks_them(t_env, options, words):
    with pytest.raises(SqlValidationError, match=words):
        t_env.execute_sql(f"CREATE TABLE bad (id BIGINT) WITH ('connector' = 'jdbc', {options})")


def test_changes_keep_the_last_change_per_key_and_skip_update_before():
    table = pa.table({"k": [1, 1, 2, 2, 3], "v": [10, 11, 20, 21, 30], "__op": pa.array([0, 1, 2, 3, 0], pa.int8())})
    assert changes([table], ["k"]).to_pylist() == [{"k": 1, "v": 10, "fb_op": 0}, {"k": 2, "v": 21, "fb_op": 3},
                                                    {"k": 3, "v": 30, "fb_op": 0}]
    assert changes([table.drop_columns(["__op"])], []).column("v").to_pylist() == [10, 11, 20, 21, 30]
    assert changes([], ["k"]) is None


def test_the_datastream_builders_make_the_same_params():
    connection = (JdbcConnectionOptions.JdbcConnectionOptionsBuilder().with_url("jdbc:postgresql://h:1/db")
                  .with_user_name("u").with_password("p").build())
    sink = JdbcSink.sink("s.totals", connection, key_columns=["customer"])
    assert (sink["schema_name"], sink["table_name"], sink["key"], sink["max_rows"]) == ("s", "totals", ["customer"], 100)
    source = JdbcSource.source("orders", "id BIGINT, amount DOUBLE", connection, partition=("id", 2, 1, 4))
    assert source["columns"] == ["id", "amount"] and source["partition"]["num"] == 2
    with pytest.raises(ValueError, match="option 'url' must be a PostgreSQL JDBC URL"):
        JdbcSink.sink("t", JdbcConnectionOptions(url="jdbc:oracle:thin:@h:1521:db"))
