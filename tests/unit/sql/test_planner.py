"""Planning without a cluster: logical plans, JobGraphs, deterministic uids and validation errors."""
import pytest

from runtime.api.environment import StreamExecutionEnvironment
from runtime.api.table import StreamTableEnvironment
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
    assert "== Optimized Logical Plan ==" in text and "ExecutionGraph of" in text


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
    ("SELECT STDDEV(amount) FROM clicks", UnsupportedSqlError, "aggregate function STDDEV"),
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
