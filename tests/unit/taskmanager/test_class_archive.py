"""Which class archive a Spark driver JVM maps or records for, and when one is written (no Spark started)."""
import fcntl
import mmap
import os

from runtime.config import Configuration
from runtime.taskmanager import class_archive, write_class_archive
from runtime.taskmanager.spark_session import session_settings


def _conf(tmp_path, **more):
    return Configuration({"taskmanager.spark.class-archive.dir": str(tmp_path), **more})


def test_the_archive_is_named_after_the_installation_and_jvm_options(tmp_path):
    first = class_archive.archive_path(_conf(tmp_path))
    assert first is not None and first.parent == tmp_path and first.suffix == ".jsa"
    assert class_archive.archive_path(_conf(tmp_path)) == first, "the same installation finds the same archive"
    other_gc = class_archive.archive_path(_conf(tmp_path, **{"taskmanager.spark.jvm-options": "-XX:+UseG1GC"}))
    more_jars = class_archive.archive_path(_conf(tmp_path, **{"spark.driver.extraClassPath": "/opt/x.jar"}))
    assert len({first, other_gc, more_jars}) == 3, "an archive recorded under other options would not map"


def test_two_environments_with_the_same_pyspark_release_keep_an_archive_each(tmp_path, monkeypatch):
    """An archive maps only for the jars it was written from: two virtual environments must not share one."""
    here = class_archive.archive_path(_conf(tmp_path))
    monkeypatch.setattr(class_archive, "_pyspark_location", lambda: "/elsewhere/venv/lib/python3.11/site-packages/pyspark")
    assert class_archive.archive_path(_conf(tmp_path)) != here


def test_no_archive_when_switched_off_or_on_spark_connect(tmp_path):
    assert class_archive.archive_path(_conf(tmp_path, **{"taskmanager.spark.class-archive.enabled": False})) is None
    assert class_archive.archive_path(_conf(tmp_path, **{"spark.remote": "sc://127.0.0.1:15002"})) is None


def test_a_users_java_options_come_after_the_defaults_so_they_win(tmp_path):
    conf = _conf(tmp_path, **{"spark.driver.extraJavaOptions": "-XX:+UseParallelGC -Dx=1"})
    defaults = conf.get("taskmanager.spark.jvm-options")
    assert defaults.startswith("-XX:+UseSerialGC")
    assert class_archive.base_java_options(conf) == f"{defaults} -XX:+UseParallelGC -Dx=1"
    assert session_settings(conf, 1)["spark.driver.extraJavaOptions"] == class_archive.base_java_options(conf)


def test_a_jvm_maps_an_existing_archive_and_records_for_a_missing_one(tmp_path):
    archive = tmp_path / "spark.jsa"
    options, records = class_archive.driver_java_options("-Dbase=1", archive)
    assert records and options.startswith("-XX:+RecordDynamicDumpInfo") and options.endswith("-Dbase=1")
    archive.write_bytes(b"x")
    options, records = class_archive.driver_java_options("-Dbase=1", archive)
    assert not records and options.startswith(f"-XX:SharedArchiveFile={archive} ") and options.endswith("-Dbase=1")
    assert class_archive.driver_java_options("-Dbase=1", None) == ("-Dbase=1", False)


def test_mapping_is_read_from_the_process_memory_map(tmp_path):
    archive = tmp_path / "mapped.jsa"
    archive.write_bytes(b"\0" * 4096)
    other = tmp_path / "other.jsa"
    with open(archive, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ):
        assert class_archive.is_mapped(os.getpid(), archive)
        assert not class_archive.is_mapped(os.getpid(), other)


def test_an_archive_the_jvm_did_not_map_is_removed_to_be_written_again(tmp_path):
    archive = tmp_path / "stale.jsa"
    archive.write_bytes(b"stale")
    class_archive.forget_unmapped(os.getpid(), archive)
    assert not archive.exists()


def test_nothing_is_written_over_an_existing_archive_or_while_another_process_writes_it(tmp_path):
    archive = tmp_path / "spark.jsa"
    with open(tmp_path / "spark.jsa.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        assert class_archive.write(1, archive) is False  # pid 1 is never dumped: the lock stops it first
    assert not archive.exists()
    archive.write_bytes(b"done")
    assert class_archive.write(1, archive) is False and archive.read_bytes() == b"done"


def test_a_users_own_shared_archive_replaces_ours(tmp_path):
    archive = tmp_path / "spark.jsa"
    archive.write_bytes(b"x")
    own = "-XX:SharedArchiveFile=/opt/mine.jsa"
    assert class_archive.driver_java_options(own, archive) == (own, False)


def test_the_archive_command_reads_the_environment_as_taskmanagers_do(tmp_path, monkeypatch, capsys):
    """An archive written for the defaults while TaskManagers start with other JVM options from the
    environment would never map; switched off there, the command must see that (and start no JVM)."""
    monkeypatch.setenv("FLINKBENCH_TASKMANAGER_SPARK_CLASS_ARCHIVE_ENABLED", "false")
    assert write_class_archive.main([str(tmp_path)]) == 1
    assert "switched off" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())
