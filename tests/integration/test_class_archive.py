"""A TaskManager that sits idle writes the machine's Spark class archive; Spark JVMs started after it map it."""
import psutil

from runtime.taskmanager import class_archive
from tests.helpers.clusters import started_cluster, wait_until


def _spark_jvm(tm_pid: int) -> psutil.Process | None:
    """The TaskManager's Spark driver JVM (not the short-lived launcher JVM that spark-submit runs first)."""
    for child in psutil.Process(tm_pid).children(recursive=True):
        try:
            if "org.apache.spark.deploy.SparkSubmit" in child.cmdline():
                return child
        except psutil.NoSuchProcess:
            continue
    return None


def test_an_idle_task_manager_writes_the_class_archive_and_the_next_spark_jvm_maps_it(tmp_path):
    folder = tmp_path / "archives"
    config = {"taskmanager.spark.class-archive.dir": str(folder)}
    with started_cluster(tmp_path / "cluster", taskmanagers=1, slots=1, config=config) as cluster:
        archive = wait_until(lambda: next(folder.glob("*.jsa"), None), timeout=180,
                             what="the idle TaskManager to write the Spark class archive")
        assert "Spark class archive written to" in cluster.taskmanagers[0].log_tail(200)
        assert not list(folder.glob("*.partial")), "a finished dump leaves no partial file"
        second = cluster.add_taskmanager()
        jvm = wait_until(lambda: _spark_jvm(second.pid), timeout=120, what="the second TaskManager's Spark JVM")
        assert wait_until(lambda: class_archive.is_mapped(jvm.pid, archive), timeout=60,
                          what="the new Spark JVM to map the archive")
        assert "-XX:+RecordDynamicDumpInfo" not in " ".join(jvm.cmdline())
