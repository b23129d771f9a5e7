"""SQL jobs under failures: an INSERT INTO a filesystem table with checkpointing survives TaskManager kills
with exactly the output of a run without failures, and resumes from a savepoint at another parallelism."""
from __future__ import annotations

import time

import pytest

from runtime.table import StreamTableEnvironment
from runtime.examples import clicks
from tests.helpers.pacing import Pace
from tests.helpers.spark_reference import clicks_expected, clicks_rows
from tests.helpers.clusters import (busy_taskmanager, completed_checkpoints, job_state, wait_for_checkpoint_after_restart,
                                    wait_until)

pytestmark = pytest.mark.slow
OUT_SCHEMA = "user INT, window_start TIMESTAMP, window_end TIMESTAMP, clicks BIGINT, total DOUBLE"


def expected_rows(spark, rows: int) -> list[tuple]:
    return clicks_rows(clicks_expected(spark, rows))


def written_rows(spark, path) -> list[tuple]:
    return clicks_rows(r.asDict() for r in spark.read.schema(OUT_SCHEMA).csv(str(path)).collect())


def wait_for_checkpoint(cluster, job_id, timeout=300):
    before = completed_checkpoints(cluster.client, job_id)
    wait_until(lambda: completed_checkpoints(cluster.client, job_id) > before or job_state(cluster.client, job_id) == "FINISHED",
               timeout, "a new completed checkpoint")


def _checkpointed_sql(cluster, parallelism, savepoint=None) -> StreamTableEnvironment:
    """A table environment on ``cluster`` checkpointing every second, started from ``savepoint`` when given."""
    env = cluster.environment()
    env.set_parallelism(parallelism)
    env.enable_checkpointing("1 s")
    if savepoint:
        env.from_savepoint(savepoint)
    return StreamTableEnvironment.create(env)


def sql_job(cluster, out, rows, parallelism, rate=None, pace=None, savepoint=None):
    """The clicks TUMBLE query into CSV files; its source limited to ``rate`` rows/s or, with ``pace``,
    paced by that function in its WHERE clause (a SQL function holding each batch while the pace is on)."""
    t_env = _checkpointed_sql(cluster, parallelism, savepoint)
    *tables, insert = clicks.sql(rows=rows, sink="filesystem", path=str(out), rows_per_second=rate)
    for statement in tables:
        t_env.execute_sql(statement)
    if pace is not None:
        t_env.create_temporary_function("paced", pace, "DOUBLE")
        insert = insert.replace("WHERE amount > 0.1", "WHERE paced(amount) > 0.1")
        assert "paced(" in insert, insert
    return t_env.execute_sql(insert).get_job_client()


@pytest.mark.timeout(900)
def test_insert_into_files_survives_two_taskmanager_kills_exactly_once(fresh_cluster, spark, tmp_path):
    rows = 100_000  # 100 s of paced input (lifted after the kills): two kill cycles of a restart and a checkpoint
    # each, under load. The clicks table's rate is too high to matter, so its source would start with bundles of
    # all its rows, each held whole by the pace, its checkpoint barrier behind it: bundles of at most 2,000 rows
    # (4 s paced) let checkpoints complete while the input lasts
    cluster = fresh_cluster(taskmanagers=3, slots=2, **{"restart-strategy.fixed-delay.delay": "200 ms",
                                                        "taskmanager.bundle.max-rows": "2000"})
    out = tmp_path / "counts"
    pace = Pace(tmp_path / "pace", 500)
    job = sql_job(cluster, out, rows, parallelism=2, pace=pace)
    for kill in range(2):  # each kill after the previous one's restart has run and checkpointed
        wait_for_checkpoint_after_restart(cluster.client, job.job_id, restarts=kill)
        assert job_state(cluster.client, job.job_id) != "FINISHED", f"finished before kill {kill + 1}"
        cluster.kill_taskmanager(busy_taskmanager(cluster.client, job.job_id))
        cluster.add_taskmanager(wait=False)
    pace.lift()
    assert job.wait(600) == "FINISHED"
    assert job.details()["restarts"] >= 2
    assert written_rows(spark, out) == expected_rows(spark, rows), "nothing lost, nothing duplicated"


@pytest.mark.timeout(900)
def test_stop_with_savepoint_and_resume_at_another_parallelism(cluster, spark, tmp_path):
    rows = 40_000  # on the shared cluster (2 x 2 slots): a stop and a resume break nothing
    out = tmp_path / "counts"
    first = sql_job(cluster, out, rows, parallelism=2, rate=2_000)
    wait_for_checkpoint(cluster, first.job_id)
    time.sleep(2)
    savepoint = first.savepoint(str(tmp_path / "savepoints"), stop=True)
    assert first.wait(120) == "FINISHED"
    second = sql_job(cluster, out, rows, parallelism=3, rate=20_000, savepoint=savepoint)
    assert second.wait(600) == "FINISHED"
    parallelisms = {v["parallelism"] for v in second.details()["vertices"]}
    assert 3 in parallelisms
    assert written_rows(spark, out) == expected_rows(spark, rows), "the same answer as without the stop"


DIPS = ("INSERT INTO dips SELECT `user`, start_at, end_at, depth, n FROM clicks MATCH_RECOGNIZE (PARTITION BY `user` "
        "ORDER BY ts MEASURES A.ts AS start_at, C.ts AS end_at, A.amount - MIN(B.amount) AS depth, COUNT(B.amount) AS n "
        "AFTER MATCH SKIP PAST LAST ROW PATTERN (A B+ C) DEFINE B AS B.amount < A.amount, C AS C.amount > A.amount)")
DIPS_SCHEMA = "user INT, start_at TIMESTAMP, end_at TIMESTAMP, depth DOUBLE, n BIGINT"


def dips_job(cluster, out, rows, parallelism, rate, savepoint=None):
    """MATCH_RECOGNIZE over the clicks' amounts per user (each dip and its recovery) into CSV files."""
    t_env = _checkpointed_sql(cluster, parallelism, savepoint)
    source, *_ = clicks.sql(rows=rows, rows_per_second=rate, event_rate=200)
    t_env.execute_sql(source)
    t_env.execute_sql(f"CREATE TABLE dips ({DIPS_SCHEMA.replace('user', '`user`', 1)}) WITH ('connector' = "
                      f"'filesystem', 'path' = '{out}', 'format' = 'csv')")
    return t_env.execute_sql(DIPS).get_job_client()


@pytest.mark.timeout(900)
def test_match_recognize_resumes_its_partial_matches_from_a_savepoint_at_another_parallelism(cluster, spark, tmp_path):
    """Buffered rows and partial matches of every user go into the savepoint and come back, split by key group
    over three subtasks instead of two: the matches equal those of a run that never stopped (on the shared
    cluster: its four slots hold the resumed job and the reference side by side)."""
    rows = 10_000
    first = dips_job(cluster, tmp_path / "dips", rows, parallelism=2, rate=400)
    wait_for_checkpoint(cluster, first.job_id)
    savepoint = first.savepoint(str(tmp_path / "savepoints"), stop=True)
    assert first.wait(120) == "FINISHED"
    second = dips_job(cluster, tmp_path / "dips", rows, parallelism=3, rate=20_000, savepoint=savepoint)
    reference = dips_job(cluster, tmp_path / "reference", rows, parallelism=1, rate=20_000)
    assert second.wait(600) == "FINISHED" and reference.wait(600) == "FINISHED"
    assert 3 in {v["parallelism"] for v in second.details()["vertices"]}

    def written(path):
        return sorted(tuple(r) for r in spark.read.schema(DIPS_SCHEMA).csv(str(path)).collect())
    expected = written(tmp_path / "reference")
    assert len(expected) > 100, "the input has dips to find"
    assert written(tmp_path / "dips") == expected, "no match lost or repeated across the stop"
