"""A process's own report for the dashboard: recent log lines kept in order and bounded; resident memory;
the views model keeps the latest report of each TaskManager."""
from __future__ import annotations

import logging
import subprocess
import sys

from runtime import events
from runtime.codec import to_plain
from runtime.messages import TaskManagerStatus
from runtime.process_info import LogTail, rss_bytes
from runtime.views.model import ClusterModel


def test_log_tail_keeps_the_last_lines_formatted():
    tail = LogTail(capacity=3)
    logger = logging.getLogger("flinkbench.test.tail")
    logger.addHandler(tail)
    logger.setLevel(logging.INFO)
    try:
        for i in range(5):
            logger.info("line %d", i)
        logger.debug("not kept: below INFO")
    finally:
        logger.removeHandler(tail)
    lines = tail.lines()
    assert len(lines) == 3 and [line.rsplit(" ", 1)[-1] for line in lines] == ["2", "3", "4"]
    assert "INFO flinkbench.test.tail: line 4" in lines[-1]


def test_resident_memory_counts_children_too():
    alone = rss_bytes()
    assert alone > 10 * 1024 * 1024  # a Python process with pyarrow loaded
    child = subprocess.Popen([sys.executable, "-c", "import sys, time; b = bytearray(80 << 20); sys.stdout.write('ok\\n');"
                              " sys.stdout.flush(); time.sleep(30)"], stdout=subprocess.PIPE)
    try:
        assert child.stdout.readline() == b"ok\n"
        assert rss_bytes() - alone > 60 * 1024 * 1024
    finally:
        child.kill()
        child.wait()


def test_the_model_keeps_each_taskmanagers_latest_status():
    model = ClusterModel()
    model.apply(to_plain(events.TaskManagerRegistered("tm-a", "127.0.0.1", 1, 2, 7)))
    model.apply(to_plain(events.TaskManagerStatusReported("tm-a", TaskManagerStatus("tm-a", 123, "1g", ["hello"]))))
    model.apply(to_plain(events.TaskManagerStatusReported("tm-gone", TaskManagerStatus("tm-gone", 1, "1g"))))
    assert model.taskmanagers["tm-a"].status == {"rss_bytes": 123, "spark_driver_memory": "1g", "log_lines": ["hello"],
                                                 "hardware": {}, "jvm": {}, "spark_ui": None}
    assert "tm-gone" not in model.taskmanagers
