"""TaskManagers whose Spark sessions run on real Spark engines started by the test: a standalone cluster
(one master, two workers) and a Spark Connect server. The clicks job must give the exact answer."""
from __future__ import annotations

import psutil

from runtime.examples import clicks
from tests.helpers.spark_reference import assert_clicks_exact
from tests.helpers.clusters import started_cluster
from tests.helpers.spark_engines import spark_connect_server, spark_standalone

ROWS = 60_000


def _run_clicks(cluster, spark) -> None:
    env = cluster.environment()
    env.set_parallelism(2)
    clicks.build(env, ROWS)
    assert_clicks_exact(spark, env.execute_async("clicks").results(timeout=300), ROWS)


def _python_runs_on_the_engine(cluster) -> None:
    """A Python map runs in the engine's Python workers, which cannot import flinkbench: the plan
    carries every function it needs."""
    def where(frame):
        import os
        return frame.assign(pythonpath=os.environ.get("PYTHONPATH", ""))

    env = cluster.environment()
    env.set_parallelism(2)
    (env.datagen("n BIGINT", number_of_rows=1_000, fields={"n": {"kind": "sequence"}})
        .map(where, schema="n BIGINT, pythonpath STRING").collect())
    got = env.execute_async("where python runs").results(timeout=300)
    assert sorted(got.column("n").to_pylist()) == list(range(1_000))
    assert {p.rsplit("/", 1)[-1] for p in got.column("pythonpath").to_pylist()} == {"no-flinkbench"}


def _taskmanagers(cluster) -> list[dict]:
    return cluster.client.get("/taskmanagers")["taskmanagers"]


def test_clicks_is_exact_with_every_task_manager_driving_a_spark_standalone_cluster(tmp_path, spark):
    with spark_standalone(tmp_path / "spark", workers=2, cores=1, memory="1g") as engine:
        conf = {"spark.master": engine.url, "spark.cores.max": "1", "spark.executor.memory": "512m",
                "spark.driver.memory": "512m"}
        with started_cluster(tmp_path / "cluster", taskmanagers=2, slots=1, config=conf) as cluster:
            _run_clicks(cluster, spark)
            _python_runs_on_the_engine(cluster)
            tms = _taskmanagers(cluster)
            assert {tm["sparkMaster"] for tm in tms} == {engine.url}
            state = engine.state()
            apps = {app["name"]: app for app in state["activeapps"]}
            assert set(apps) == {f"flinkbench-{tm['id']}" for tm in tms}, "one Spark application per TaskManager"
            assert all(app["cores"] == 1 for app in apps.values()), "each with its executor (-D spark.cores.max=1)"
            assert [w["coresused"] for w in state["workers"]] == [1, 1], "executors on both workers"


def test_clicks_is_exact_with_every_task_manager_on_a_spark_connect_server(tmp_path, spark):
    with spark_connect_server(tmp_path / "spark", master="local[2]", memory="1g") as remote:
        with started_cluster(tmp_path / "cluster", taskmanagers=2, slots=1, config={"spark.remote": remote}) as cluster:
            _run_clicks(cluster, spark)
            _python_runs_on_the_engine(cluster)
            assert {tm["sparkMaster"] for tm in _taskmanagers(cluster)} == {remote}
            for child in cluster.taskmanagers:
                jvms = [p for p in psutil.Process(child.pid).children(recursive=True) if "java" in p.name()]
                assert not jvms, "a Spark Connect TaskManager starts no JVM of its own"
