"""SQL statements beyond queries on a real cluster: a statement set of three INSERTs is one job that reads its source
once, SET/RESET change what the next job gets, SHOW/DESCRIBE read the catalog, EXPLAIN prints Flink's sections."""
from __future__ import annotations

import pytest

from runtime.table import StreamTableEnvironment
from runtime.changelog import materialize

pytestmark = pytest.mark.slow

ROWS = 60


@pytest.fixture(scope="module")
def t_env(cluster, tmp_path_factory):
    folder = tmp_path_factory.mktemp("sql-statements")
    (folder / "src").mkdir()
    (folder / "src" / "part-0.csv").write_text("".join(f"{i},{i % 4},{i * 7 % 10 - 3}\n" for i in range(ROWS)))
    env = cluster.environment()
    env.set_parallelism(2)
    t_env = StreamTableEnvironment.create(env)
    t_env.execute_sql(f"CREATE TABLE src (id INT, k INT, v INT) WITH ('connector' = 'filesystem', "
                      f"'path' = '{folder / 'src'}', 'format' = 'csv')")
    for name in ("copy", "positive", "per_key"):
        t_env.execute_sql(f"CREATE TABLE {name} (a INT, b INT) WITH ('connector' = 'filesystem', "
                          f"'path' = '{folder / name}', 'format' = 'csv')")
    return t_env


def rows(t_env, query):
    return sorted(tuple(r) for r in materialize(list(t_env.execute_sql(query).collect())))


def test_a_statement_set_of_three_inserts_is_one_job_reading_its_source_once(t_env, cluster):
    result = t_env.execute_sql("""EXECUTE STATEMENT SET BEGIN
        INSERT INTO copy SELECT id, v FROM src;
        INSERT INTO positive SELECT id, v FROM src WHERE v > 0;
        INSERT INTO per_key SELECT k * 10, v FROM src WHERE k = 1;
    END""")
    job = result.get_job_client()
    assert job.wait(180) == "FINISHED"
    vertices = job.details()["vertices"]
    sources = [v for v in vertices if v["name"].startswith("Source: src")]
    assert len(sources) == 1, [v["name"] for v in vertices]
    assert sources[0]["metrics"]["write-records"] == ROWS, "each row read once, for all three INSERTs"
    assert sum(1 for v in vertices for part in v["name"].split(" -> ") if part.startswith("Sink: ")) == 3
    data = [(i, i % 4, i * 7 % 10 - 3) for i in range(ROWS)]
    assert rows(t_env, "SELECT a, b FROM copy") == sorted((i, v) for i, _, v in data)
    assert rows(t_env, "SELECT a, b FROM positive") == sorted((i, v) for i, _, v in data if v > 0)
    assert rows(t_env, "SELECT a, b FROM per_key") == sorted((k * 10, v) for _, k, v in data if k == 1)


def test_set_and_reset_change_the_next_jobs_settings(t_env):
    t_env.execute_sql("SET 'parallelism.default' = '1'")
    try:
        one = t_env.execute_sql("SELECT id FROM src WHERE id < 3").get_job_client()
        assert {v["parallelism"] for v in one.details()["vertices"]} == {1}
    finally:
        t_env.execute_sql("RESET 'parallelism.default'")
    shown = dict(t_env.execute_sql("SET").result.rows)
    assert "parallelism.default" not in shown
    with pytest.raises(Exception, match="table.local-time-zone.*time zone id"):
        t_env.execute_sql("SET 'table.local-time-zone' = 'Mars/Olympus'")


def test_show_and_describe_read_the_catalog(t_env):
    tables = [r[0] for r in t_env.execute_sql("SHOW TABLES").result.rows]
    assert {"src", "copy", "positive", "per_key"} <= set(tables)
    described = {r[0]: r[1] for r in t_env.execute_sql("DESCRIBE src").result.rows}
    assert described == {"id": "INT", "k": "INT", "v": "INT"}
    assert t_env.execute_sql("SHOW COLUMNS FROM src").result.rows == t_env.execute_sql("DESCRIBE src").result.rows
    t_env.execute_sql("CREATE VIEW small AS SELECT id FROM src WHERE v < 0")
    assert t_env.execute_sql("SHOW CREATE VIEW small").result.rows == [("CREATE VIEW small AS SELECT id FROM src WHERE "
                                                                        "v < 0",)]
    assert "small" in [r[0] for r in t_env.execute_sql("SHOW VIEWS").result.rows]


def test_explain_prints_flinks_sections_with_changelog_modes(t_env):
    text = t_env.execute_sql("EXPLAIN CHANGELOG_MODE SELECT k, COUNT(*) AS n FROM src GROUP BY k").result.text
    sections = [line for line in text.splitlines() if line.startswith("== ")]
    assert sections == ["== Abstract Syntax Tree ==", "== Optimized Physical Plan ==", "== Optimized Execution Plan =="]
    assert "changelogMode=[I,UB,UA,D]" in text and "changelogMode=[I])" in text
    with pytest.raises(Exception, match="EXPLAIN ESTIMATED_COST is not supported"):
        t_env.execute_sql("EXPLAIN ESTIMATED_COST SELECT k FROM src")
