"""What a TaskManager's Spark session is built with, and when it must be replaced (no Spark started)."""
import pytest

from runtime.config import ConfigError, Configuration
from runtime.taskmanager.spark_session import (PAGE_SIZE, UNSEEN_HISTORY, SparkSessionKeeper, health_verdict, is_out_of_memory,
                                               session_settings)


def test_a_local_session_binds_and_advertises_the_task_manager_host_and_takes_every_spark_key():
    conf = Configuration({"taskmanager.host": "10.0.0.7", "taskmanager.bind-host": "0.0.0.0",
                          "spark.executor.memory": "512m", "spark.cores.max": "1", "spark.ui.enabled": "true"})
    settings = session_settings(conf, slots=3)
    assert settings["spark.master"] == "local[3]"
    assert settings["spark.driver.host"] == "10.0.0.7"
    assert settings["spark.driver.bindAddress"] == "0.0.0.0"
    assert settings["spark.sql.shuffle.partitions"] == "3"
    assert settings["spark.executor.memory"] == "512m" and settings["spark.cores.max"] == "1"
    assert settings["spark.ui.enabled"] == "true", "an explicit key wins over the TaskManager's default"


def test_spark_keys_name_the_driver_host_and_master_themselves():
    conf = Configuration({"spark.master": "spark://m:7077", "spark.driver.host": "tm-1.example",
                          "spark.sql.shuffle.partitions": 8})
    settings = session_settings(conf, slots=2)
    assert settings["spark.master"] == "spark://m:7077"
    assert settings["spark.driver.host"] == "tm-1.example"
    assert settings["spark.driver.bindAddress"] == "127.0.0.1"
    assert settings["spark.sql.shuffle.partitions"] == "8"


def test_a_spark_connect_session_gets_session_settings_only():
    conf = Configuration({"spark.remote": "sc://127.0.0.1:15002", "spark.driver.memory": "4g",
                          "spark.sql.ansi.enabled": "false"})
    settings = session_settings(conf, slots=2)
    assert not any(k.startswith(("spark.driver.", "spark.ui.")) or k in ("spark.master", "spark.remote")
                   for k in settings), settings
    assert settings["spark.sql.ansi.enabled"] == "false"
    assert settings["spark.sql.session.timeZone"] == "UTC"


def test_a_driver_of_our_own_uses_small_memory_pages_unless_told_otherwise():
    assert session_settings(Configuration(), slots=1)["spark.buffer.pageSize"] == PAGE_SIZE == "4m"
    assert session_settings(Configuration({"spark.buffer.pageSize": "16m"}), slots=1)["spark.buffer.pageSize"] == "16m"
    remote = session_settings(Configuration({"spark.remote": "sc://127.0.0.1:15002"}), slots=1)
    assert "spark.buffer.pageSize" not in remote, "a Spark Connect server sizes its own pages"


def test_a_driver_without_its_web_ui_keeps_no_query_history_and_one_with_it_keeps_sparks_default():
    quiet = session_settings(Configuration(), slots=1)
    assert quiet["spark.ui.enabled"] == "false"
    assert quiet["spark.sql.ui.retainedExecutions"] == "1" and quiet["spark.ui.retainedJobs"] == "1"
    shown = session_settings(Configuration({"spark.ui.enabled": "true"}), slots=1)
    assert not any(k in shown for k in UNSEEN_HISTORY), "the user's UI shows Spark's usual history"
    assert session_settings(Configuration({"spark.ui.retainedJobs": "50"}), slots=1)["spark.ui.retainedJobs"] == "50"
    remote = session_settings(Configuration({"spark.remote": "sc://127.0.0.1:15002"}), slots=1)
    assert not any(k in remote for k in UNSEEN_HISTORY), "a Connect server's driver is configured by the server"


def test_column_functions_skip_recording_python_call_sites_unless_asked():
    assert session_settings(Configuration(), slots=1)["spark.python.sql.dataFrameDebugging.enabled"] == "false"
    asked = Configuration({"spark.python.sql.dataFrameDebugging.enabled": "true"})
    assert session_settings(asked, slots=1)["spark.python.sql.dataFrameDebugging.enabled"] == "true"


def test_every_spark_key_is_accepted_as_a_string_and_shown_in_the_config_view():
    conf = Configuration.load(None, {"spark.kubernetes.container.image": "spark:4.3"}, environ={})
    assert conf.spark_settings() == {"spark.kubernetes.container.image": "spark:4.3"}
    entries = {e["key"]: e["value"] for e in conf.as_flink_entries()}
    assert entries["spark.kubernetes.container.image"] == "spark:4.3"
    with pytest.raises(ConfigError, match="unknown config key 'spark.'"):
        Configuration({"spark.": "x"})
    with pytest.raises(ConfigError, match="expected a string"):
        Configuration({"spark.executor.memory": {"a": 1}})


def test_yaml_nesting_reaches_spark_keys(tmp_path):
    f = tmp_path / "conf.yaml"
    f.write_text("spark:\n  executor:\n    memory: 1g\n  master: spark://h:7077\n")
    conf = Configuration.load(str(f), environ={})
    assert conf.spark_settings() == {"spark.executor.memory": "1g", "spark.master": "spark://h:7077"}


def test_addresses_fall_back_as_flink_documents():
    conf = Configuration({"jobmanager.rpc.address": "jm.example"})
    assert conf.rest_address() == conf.rest_bind_address() == "jm.example"
    conf = Configuration({"rest.address": "127.0.0.2", "rest.bind-address": "0.0.0.0"})
    assert (conf.rest_address(), conf.rest_bind_address()) == ("127.0.0.2", "0.0.0.0")
    assert Configuration({"taskmanager.host": "127.0.0.3"}).taskmanager_bind_host() == "127.0.0.3"


@pytest.mark.parametrize("exit_code,stopped,ooms,expected", [
    (None, False, 0, None),
    (None, False, 1, None),
    (52, False, 0, "the Spark JVM exited with code 52"),
    (None, True, 0, "the Spark context stopped"),
    (None, False, 2, "raised 2 OutOfMemoryErrors"),
])
def test_health_verdict(exit_code, stopped, ooms, expected):
    verdict = health_verdict(exit_code, stopped, ooms, threshold=2)
    assert verdict == expected if expected is None else expected in verdict


def test_out_of_memory_is_recognised_in_spark_errors():
    assert is_out_of_memory(RuntimeError("An error occurred ... java.lang.OutOfMemoryError: Java heap space"))
    assert not is_out_of_memory(RuntimeError("[DIVIDE_BY_ZERO] Division by zero"))


class _FakeSession:
    is_stopped = False

    def __init__(self):
        self.stopped = False

    def stop(self):
        self.stopped = True


def test_repeated_out_of_memory_errors_replace_the_session(monkeypatch):
    from runtime.taskmanager.spark_session import SparkSessionKeeper

    keeper = SparkSessionKeeper(Configuration({"spark.remote": "sc://127.0.0.1:1"}), 1, "t")
    made = []
    monkeypatch.setattr(keeper, "_create", lambda: made.append(_FakeSession()) or made[-1])
    first = keeper.session()
    keeper.note_failure(RuntimeError("java.lang.OutOfMemoryError: Java heap space"))
    assert keeper.session() is first, "one OutOfMemoryError is not yet a reason"
    keeper.note_failure(RuntimeError("[DIVIDE_BY_ZERO]"))
    keeper.note_failure(RuntimeError("java.lang.OutOfMemoryError: GC overhead limit exceeded"))
    second = keeper.session()
    assert second is not first and first.stopped and keeper.restarts == 1
    assert keeper.session() is second


def test_a_stopped_keeper_starts_no_session_again():
    """A task finishing its bundle while its TaskManager stops must not launch a fresh JVM."""
    keeper = SparkSessionKeeper(Configuration(), 2, "flinkbench-test")
    keeper.stop()
    with pytest.raises(RuntimeError, match="stopping"):
        keeper.session()


def test_a_healthy_session_is_asked_again_only_after_a_while_or_a_failure(monkeypatch):
    """Each health check is two round trips to the JVM: a bundle asks for the session a dozen times."""
    from runtime.taskmanager import spark_session

    keeper = SparkSessionKeeper(Configuration({"spark.remote": "sc://127.0.0.1:1"}), 1, "t")
    monkeypatch.setattr(keeper, "_create", _FakeSession)
    clock, checks = [100.0], []
    monkeypatch.setattr(spark_session.time, "monotonic", lambda: clock[0])
    verdict = keeper._verdict
    monkeypatch.setattr(keeper, "_verdict", lambda: checks.append(clock[0]) or verdict())
    first = keeper.session()
    assert keeper.session() is first and checks == [], "a session just made is healthy"
    clock[0] += spark_session.HEALTHY_FOR_S
    assert keeper.session() is first and keeper.session() is first and checks == [clock[0]]
    first.is_stopped = True
    keeper.recheck()  # a task failed
    second = keeper.session()
    assert second is not first and keeper.restarts == 1 and len(checks) == 2
