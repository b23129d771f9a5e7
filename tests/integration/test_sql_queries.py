"""The SQL query suite on a real cluster: each query's final table (its changelog applied) equals Spark
batch SQL over the same files; the changelogs of a GROUP BY and a join are correct retraction streams."""
from __future__ import annotations

import concurrent.futures

import pytest

from runtime.table import StreamTableEnvironment
from runtime import changelog
from runtime.changelog import materialize
from tests.helpers.sql_suite import CASES, SCHEMAS, ddl, normalized, spark_text, write_inputs

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    return write_inputs(tmp_path_factory.mktemp("sql-inputs"))


@pytest.fixture(scope="module")
def t_env(cluster, inputs):
    env = cluster.environment()
    env.set_parallelism(2)
    t_env = StreamTableEnvironment.create(env)
    for statement in ddl(inputs):
        t_env.execute_sql(statement)
    return t_env


@pytest.fixture(scope="module")
def flink(tmp_path_factory):
    """Apache Flink 2.3's answers to every case it runs as written: one PyFlink run for all of them, started
    in the background so that it overlaps this module's own queries (a future; ``.result()`` waits)."""
    from tests.helpers.flink_sql import flink_answers

    queries = {c.name: c.sql for c in CASES if c.flink}
    with concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="pyflink") as pool:
        folder = tmp_path_factory.mktemp("pyflink")
        yield pool.submit(flink_answers, ddl(write_inputs(folder / "inputs", split=False)), queries, folder)


@pytest.fixture(scope="module")
def final_tables() -> dict:
    """Each case's final table on Flinkbench, kept for the comparison with Flink's answer."""
    return {}


@pytest.fixture(scope="module")
def spark_views(spark, inputs):
    for name, path in inputs.items():
        spark.read.schema(SCHEMAS[name]).csv(str(path)).createOrReplaceTempView(name)
    return spark


def run(t_env, query: str, batch: bool = False):
    t_env.get_config().set("execution.runtime-mode", "batch" if batch else "streaming")
    result = t_env.execute_sql(query)
    rows = list(result.collect())
    return rows, result


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_final_table_equals_spark_batch_sql(t_env, spark_views, flink, final_tables, case):
    rows, _ = run(t_env, case.sql, case.batch)
    got = final_tables[case.name] = normalized(materialize(rows))
    expected = normalized(spark_views.sql(spark_text(case)).collect())
    assert expected, f"{case.name}: the query selects nothing, so it proves nothing"
    assert len(got) == len(expected), f"{case.name}: {len(got)} rows, Spark {len(expected)}"
    assert got == expected, f"{case.name}: first differences {[(a, b) for a, b in zip(got, expected) if a != b][:3]}"


def _kinds_in_order(rows):
    """Per row value: the sequence of kinds it got; -U/-D must follow a +I/+U of the same row."""
    present: dict = {}
    for row in rows:
        kind = row.get_row_kind().value
        key = tuple(row)
        if changelog.is_addition(kind):
            present[key] = present.get(key, 0) + 1
        else:
            assert present.get(key, 0) > 0, f"{row!r} retracts a row that was not emitted before"
            present[key] -= 1


@pytest.mark.parametrize("query", [
    "SELECT user_id, COUNT(*) AS n, MAX(amount) AS m FROM clicks GROUP BY user_id",
    "SELECT u.uid, t.n FROM users AS u LEFT JOIN (SELECT user_id, COUNT(*) AS n FROM clicks GROUP BY user_id) AS t "
    "ON u.uid = t.user_id",
], ids=["group by", "left join of an aggregate"])
def test_changelogs_are_correct_retraction_streams(t_env, spark_views, query):
    rows, result = run(t_env, query)
    assert result.is_updating()
    kinds = {r.get_row_kind().short_string() for r in rows}
    assert "+I" in kinds and ({"-U", "-D"} & kinds), f"an updating result retracts something: {kinds}"
    _kinds_in_order(rows)
    assert normalized(materialize(rows)) == normalized(spark_views.sql(query).collect())


def test_python_functions_run_inside_spark(t_env, spark_views):
    t_env.create_temporary_function("shout", lambda urls: urls.str.upper() + "!", "STRING")
    rows, _ = run(t_env, "SELECT id, shout(url) AS loud FROM clicks WHERE id <= 20 AND shout(url) <> '/HELP!'")
    expected = spark_views.sql("SELECT id, concat(upper(url), '!') FROM clicks WHERE id <= 20 AND url <> '/help'")
    assert normalized(materialize(rows)) == normalized(expected.collect())


FLINK_CASES = [c for c in CASES if c.flink]


@pytest.mark.parametrize("case", FLINK_CASES, ids=[c.name for c in FLINK_CASES])
def test_final_table_equals_flinks_answer(flink, final_tables, case):
    assert case.name in final_tables, f"{case.name}: Flinkbench's run of it failed (see the test above)"
    answer = flink.result()[case.name]
    assert "error" not in answer, f"{case.name}: Flink could not run it: {answer.get('error')}"
    assert normalized(answer["rows"]) == final_tables[case.name], f"{case.name}: Flink's answer differs"
