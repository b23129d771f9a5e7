"""Planning without a cluster: logical plans, JobGraphs, deterministic uids and validation errors."""
import pytest

from runtime.api.environment import StreamExecutionEnvironment
from runtime.table import StreamTableEnvironment
from runtime.sql.errors import SqlValidationError, UnsupportedSqlError

CLICKS = """CREATE TABLE clicks (`user` BIGINT, url STRING, amount DOUBLE, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH ('connector' = 'datagen', 'number-of-rows' = '100')"""


@pytest.fixture
def t_env():
    t_env = StreamTableEnvironment.create(StreamExecutionEnvironment())
    t_env.execute_sql(CLICKS)
    return t_env


def explain(t_env, query):
    return t_env.explain_sql(query)


def test_a_group_by_plans_local_and_global_aggregation_behind_a_keyed_exchange(t_env):
    text = explain(t_env, "SELECT `user`, COUNT(*) AS n FROM clicks GROUP BY `user`")
    assert "GroupAggregate(groupBy=[user], select=[count(*) AS n])" in text
    assert "[local_aggregate]" in text and "[sql_group_aggregate]" in text and "hash(user)" in text
    assert "== Optimized Physical Plan ==" in text and "ExecutionGraph of" in text


def test_a_tumbling_window_query_uses_the_window_operator(t_env):
    text = explain(t_env, "SELECT window_start, `user`, SUM(amount) FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), "
                          "INTERVAL '10' SECOND)) GROUP BY window_start, window_end, `user`")
    assert "TUMBLE(size=[10000 ms])" in text and "[window_combine]" in text and "[window_aggregate]" in text


def test_the_same_query_gets_the_same_operator_uids(t_env):
    query = "SELECT `user`, MAX(amount) FROM clicks WHERE amount > 0.5 GROUP BY `user`"
    first = [line.split()[0] for line in explain(t_env, query).splitlines() if line.startswith("  sql-")]
    second = [line.split()[0] for line in explain(t_env, query).splitlines() if line.startswith("  sql-")]
    assert first == second and len(set(first)) == len(first) and len(first) >= 5


def test_the_result_schema_follows_flinks_names(t_env):
    table = t_env.sql_query("SELECT `user`, COUNT(*), AVG(`user`) AS a, amount * 2 FROM clicks GROUP BY `user`, amount")
    assert table.get_schema() == [("user", "BIGINT"), ("EXPR$1", "BIGINT"), ("a", "BIGINT"), ("EXPR$3", "DOUBLE")]


@pytest.mark.parametrize("query, error, words", [
    ("SELECT nope FROM clicks", SqlValidationError, "column 'nope' not found; available columns: user, url"),
    ("SELECT c.url FROM clicks AS k", SqlValidationError, "table or alias 'c' is not in the FROM clause"),
    ("SELECT * FROM missing", SqlValidationError, "table or view 'missing' does not exist"),
    ("SELECT url, COUNT(*) FROM clicks GROUP BY `user`", SqlValidationError, "'url' must be in GROUP BY or inside an aggregate"),
    ("SELECT `user` FROM clicks ORDER BY `user`", UnsupportedSqlError, "ORDER BY"),
    ("SELECT * FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(url), INTERVAL '1' SECOND))", SqlValidationError,
     "needs a time attribute"),
    ("SELECT LISTAGG(url) FROM clicks", UnsupportedSqlError, "aggregate function LISTAGG"),
    ("SELECT * FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '1' SECOND, INTERVAL '1' SECOND, "
     "INTERVAL '1' SECOND))", SqlValidationError, "TUMBLE takes 3 to 4 arguments"),
])
def test_validation_errors_name_what_is_wrong_and_where(t_env, query, error, words):
    with pytest.raises(error, match=words) as caught:
        t_env.sql_query(query)
    assert caught.value.line == 1 and caught.value.column is not None


def test_an_updating_query_cannot_go_into_a_filesystem_table(t_env, tmp_path):
    t_env.execute_sql(f"CREATE TABLE out (u BIGINT, n BIGINT) WITH ('connector' = 'filesystem', "
                      f"'path' = '{tmp_path}', 'format' = 'csv')")
    with pytest.raises(UnsupportedSqlError, match="does not support consuming the update and delete changes"):
        t_env.explain_sql("INSERT INTO out SELECT `user`, COUNT(*) FROM clicks GROUP BY `user`")


def test_batch_mode_refuses_unbounded_tables(t_env):
    t_env.execute_sql("CREATE TABLE endless (a INT) WITH ('connector' = 'datagen')")
    t_env.execute_sql("SET 'execution.runtime-mode' = 'batch'")
    with pytest.raises(UnsupportedSqlError, match="unbounded table 'endless' in batch mode"):
        t_env.explain_sql("SELECT * FROM endless")


USERS = "CREATE TABLE users (uid BIGINT, name STRING) WITH ('connector' = 'datagen', 'number-of-rows' = '5')"


@pytest.mark.parametrize("query, expected", [
    ("SELECT * FROM (SELECT `user`, amount, ROW_NUMBER() OVER (PARTITION BY `user` ORDER BY amount DESC) AS rn "
     "FROM clicks) WHERE rn <= 3",
     ["Rank(rankType=[ROW_NUMBER], partitionBy=[user], orderBy=[amount DESC], rankRange=[1..3])", "[sql_rank]"]),
    ("SELECT `user`, SUM(amount) OVER (PARTITION BY `user` ORDER BY ts ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) "
     "FROM clicks", ["OverAggregate(partitionBy=[user], orderBy=[ts], ROWS 2 PRECEDING", "[sql_over]"]),
    ("SELECT c.url, u.name FROM clicks AS c LEFT JOIN users AS u ON c.`user` = u.uid",
     ["Join(joinType=[LEFT], on=[user = uid])", "hash(user)", "hash(uid)"]),
    ("SELECT a.url, b.url FROM clicks a JOIN clicks b ON a.`user` = b.`user` AND a.ts BETWEEN b.ts - INTERVAL '1' "
     "SECOND AND b.ts", ["IntervalJoin(joinType=[INNER], on=[user = user0], between=[-1000 ms, 0 ms])"]),
    ("SELECT window_start, COUNT(*) FROM TABLE(CUMULATE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '1' SECOND, "
     "INTERVAL '3' SECOND)) GROUP BY window_start, window_end", ["CUMULATE(step=[1000 ms], max_size=[3000 ms])"]),
    ("SELECT `user` FROM clicks UNION ALL SELECT uid FROM users", ["Union(all=[true], fields=[user])"]),
    ("SELECT L.url, R.amount FROM (SELECT * FROM TABLE(HOP(TABLE clicks, DESCRIPTOR(ts), INTERVAL '5' SECOND, "
     "INTERVAL '10' SECOND))) L LEFT JOIN (SELECT * FROM TABLE(HOP(TABLE clicks, DESCRIPTOR(ts), INTERVAL '5' SECOND, "
     "INTERVAL '10' SECOND))) R ON L.`user` = R.`user` AND L.window_start = R.window_start AND "
     "L.window_end = R.window_end", ["WindowJoin(joinType=[LEFT], on=[user = user0])", "[sql_window_join]",
                                     "explode(transform(sequence(0, 1), k -> named_struct('window_start'"]),
    ("SELECT url, window_end FROM TABLE(CUMULATE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '5' SECOND, "
     "INTERVAL '10' SECOND))", ["sequence(CAST(floor(pmod(unix_micros(`ts`), 10000000L) / 5000000) AS INT) + 1, 2)"]),
    ("SELECT window_start, COUNT(*) FROM (SELECT * FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '5' "
     "SECOND))) GROUP BY window_start, window_end", ["WindowAggregate(groupBy=[__global], window=[TUMBLE("]),
])
def test_each_construct_plans_into_its_operator(t_env, query, expected):
    t_env.execute_sql(USERS)
    text = explain(t_env, query)
    for words in expected:
        assert words in text, (words, text)


@pytest.mark.parametrize("query, words", [
    ("SELECT * FROM clicks a JOIN users b ON a.url > b.name", "at least one equality"),
    ("SELECT * FROM clicks a LEFT JOIN users b ON a.`user` = b.uid AND a.url > b.name", "only have equalities"),
    ("SELECT * FROM (SELECT url, ROW_NUMBER() OVER (ORDER BY amount) AS rn FROM clicks) WHERE url = 'x'",
     r"ROW_NUMBER\(\) is supported for Top-N only"),
    ("SELECT SUM(amount) OVER (PARTITION BY url ORDER BY amount) FROM clicks", "ORDER BY the time attribute"),
    ("SELECT * FROM clicks CROSS JOIN users", "no cross joins"),
    ("SELECT * FROM TABLE(SESSION(TABLE clicks PARTITION BY url, DESCRIPTOR(ts), INTERVAL '5' SECOND))",
     "SESSION.* is supported only under GROUP BY window_start, window_end"),
])
def test_unsupported_joins_and_windows_are_refused_by_name(t_env, query, words):
    t_env.execute_sql(USERS)
    with pytest.raises(UnsupportedSqlError, match=words):
        t_env.sql_query(query)


@pytest.mark.parametrize("query, expected", [
    ("SELECT url, amount FROM clicks ORDER BY amount DESC, url LIMIT 3",
     "Rank(rankType=[ROW_NUMBER], partitionBy=[], orderBy=[amount DESC, url ASC], rankRange=[1..3])"),
    ("SELECT url AS u FROM clicks ORDER BY u DESC NULLS FIRST FETCH FIRST 2 ROWS ONLY",
     "Rank(rankType=[ROW_NUMBER], partitionBy=[], orderBy=[u DESC NULLS FIRST], rankRange=[1..2])"),
    ("SELECT url FROM clicks UNION ALL SELECT url FROM clicks ORDER BY url LIMIT 4",
     "Rank(rankType=[ROW_NUMBER], partitionBy=[], orderBy=[url ASC], rankRange=[1..4])"),
])
def test_order_by_with_limit_is_a_top_n_of_the_whole_result(t_env, query, expected):
    text = explain(t_env, query)
    assert expected in text and "hash(__global)" in text


@pytest.mark.parametrize("query, words", [
    ("SELECT url FROM clicks ORDER BY url", "without LIMIT is not supported in streaming mode"),
    ("SELECT url FROM clicks ORDER BY url OFFSET 3", "without LIMIT is not supported in streaming mode"),
    ("SELECT url FROM clicks ORDER BY amount LIMIT 2", r"order by a column of the SELECT list \(url\)"),
    ("SELECT url FROM clicks ORDER BY UPPER(url) LIMIT 2", "not expressions"),
])
def test_order_by_and_limit_that_cannot_run_are_refused_by_name(t_env, query, words):
    with pytest.raises(UnsupportedSqlError, match=words):
        t_env.sql_query(query)


def test_limit_with_offset_keeps_the_ranks_after_the_offset(t_env):
    text = explain(t_env, "SELECT url FROM clicks ORDER BY url LIMIT 2 OFFSET 1")
    assert "Rank(rankType=[ROW_NUMBER], partitionBy=[], orderBy=[url ASC], rankRange=[2..3])" in text


def test_order_by_in_batch_mode_sorts_the_final_result(t_env):
    t_env.execute_sql("SET 'execution.runtime-mode' = 'batch'")
    text = explain(t_env, "SELECT url FROM clicks ORDER BY url")
    assert "Rank(rankType=[ROW_NUMBER], partitionBy=[], orderBy=[url ASC], rankRange=[1..])" in text


def test_outer_interval_joins_plan_into_the_interval_join(t_env):
    text = explain(t_env, "SELECT a.url, b.url FROM clicks a FULL JOIN clicks b ON a.`user` = b.`user` AND "
                          "a.ts BETWEEN b.ts - INTERVAL '1' SECOND AND b.ts")
    assert "IntervalJoin(joinType=[FULL]" in text and "[sql_interval_join]" in text


def test_python_functions_travel_with_the_operators_that_call_them(t_env):
    from runtime.jobgraph import unpack_udf
    from runtime.sql import statements

    def twice(values):
        return values * 2

    t_env.create_temporary_function("twice", twice, "DOUBLE")
    stmt = statements.parse_script("SELECT twice(amount) AS a FROM clicks WHERE twice(amount) > 1")[0]
    env = t_env.executor.job_environment([t_env.executor.plan(stmt)])
    shipped = {op.kind: unpack_udf(op.udf) for op in env.operators if op.udf}
    assert set(shipped) == {"filter", "select"}
    (name, (function, result_type, nullary)), = shipped["select"].items()
    assert name.startswith("twice__py") and result_type == "DOUBLE" and not nullary
    assert function.func_type == "pandas" and function.func(3) == 6


def test_extract_second_is_whole_seconds_as_in_flink():
    import sqlglot

    from runtime.sql.dialect import Flink
    from runtime.sql.functions import to_spark

    assert to_spark(sqlglot.parse_one("EXTRACT(SECOND FROM ts)", read=Flink)).upper() == "SECOND(TS)"
