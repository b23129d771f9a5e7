"""A Spark driver keeps two small block-manager pools, not two hundred idle threads (real Spark session)."""
from __future__ import annotations

import collections
import os
import re

from runtime.taskmanager.spark_session import BLOCK_MANAGER_POOLS, cap_block_manager_pools
from tests.helpers.clusters import wait_until

# how Linux names the pools' threads (15 characters of "block-manager-storage-async-thread-pool-7", ...)
POOL_THREADS = ("block-manager-s", "block-manager-a")


def _threads_by_name(pid: int) -> collections.Counter:
    names = collections.Counter()
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/comm") as comm:
                names[re.sub(r"-?\d+$", "", comm.read().strip())] += 1
        except FileNotFoundError:
            pass  # the thread ended while we looked
    return names


def test_removing_blocks_runs_on_at_most_the_capped_threads(spark):
    jvm_pid = int(spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid())
    assert cap_block_manager_pools(spark, 2) == len(BLOCK_MANAGER_POOLS)
    for value in range(30):  # each removal is a message to both pools: Spark's own pools grow a thread each time
        spark.sparkContext.broadcast(value).destroy(blocking=True)
    wait_until(lambda: all(_threads_by_name(jvm_pid)[name] <= 2 for name in POOL_THREADS), 30,
               "the block-manager pools to shrink to 2 threads each")
    assert spark.sparkContext.parallelize(range(10), 2).map(lambda x: x * 2).sum() == 90  # the driver still works
