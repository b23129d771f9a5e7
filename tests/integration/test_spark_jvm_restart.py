"""A TaskManager whose Spark JVM died of a real OutOfMemoryError runs the next job on a fresh JVM process."""
from __future__ import annotations

import psutil
import pytest

from runtime.client import JobFailed
from tests.helpers.clusters import wait_until


def _spark_jvms(pid: int) -> set[int]:
    return {p.pid for p in psutil.Process(pid).children(recursive=True) if p.name() == "java"}


def test_a_spark_jvm_that_ran_out_of_heap_is_replaced_by_a_fresh_process(fresh_cluster):
    cluster = fresh_cluster(1, 1, **{"spark.driver.memory": "512m"})
    tm = cluster.taskmanagers[0]
    env = cluster.environment()
    env.datagen("n BIGINT", number_of_rows=10, fields={"n": {"kind": "sequence"}}).collect()
    assert sorted(env.execute_async("before").results(timeout=180).column("n").to_pylist()) == list(range(10))
    [first_jvm] = _spark_jvms(tm.pid)

    env = cluster.environment()  # 200 M longs (1.6 GB) in one array: more than the 512 MB heap holds
    env.datagen("n BIGINT", number_of_rows=1).select("size(array_repeat(n, 200000000)) AS s").collect()
    with pytest.raises(JobFailed):
        env.execute_async("exhausts the heap").wait(180)
    # the job fails as the error reaches Python; the JVM's own exit (its shutdown hooks) may come a little later
    wait_until(lambda: not psutil.pid_exists(first_jvm) or psutil.Process(first_jvm).status() == psutil.STATUS_ZOMBIE,
               60, "Spark to end the local driver JVM after its OutOfMemoryError")

    env = cluster.environment()
    env.datagen("n BIGINT", number_of_rows=100, fields={"n": {"kind": "sequence"}}).collect()
    assert sorted(env.execute_async("after").results(timeout=180).column("n").to_pylist()) == list(range(100))
    jvms = _spark_jvms(tm.pid)
    assert len(jvms) == 1 and first_jvm not in jvms, "the next job ran on a new JVM process"
    assert "the Spark JVM exited with code 52" in tm.log_tail(200)
