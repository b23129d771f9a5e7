import pytest

from runtime.config import ConfigError, Configuration, parse_dynamic_properties
from runtime.config_values import format_duration, parse_duration


def test_defaults_yaml_environment_and_overrides_in_precedence_order(tmp_path):
    f = tmp_path / "conf.yaml"
    f.write_text("taskmanager:\n  numberOfTaskSlots: 3\nrest.port: 9000\nheartbeat.timeout: 20 s\n")
    conf = Configuration.load(str(f), {"rest.port": "9100"},
                              environ={"FLINKBENCH_HEARTBEAT_TIMEOUT": "7 s"})
    assert conf["taskmanager.numberOfTaskSlots"] == 3
    assert conf["rest.port"] == 9100
    assert conf["heartbeat.timeout"] == 7.0
    assert conf["parallelism.default"] == 1


@pytest.mark.parametrize("key,value,expected", [
    ("rest.port", "eighty", "config key 'rest.port': expected an integer"),
    ("heartbeat.timeout", "soon", "config key 'heartbeat.timeout': expected a duration"),
    ("high-availability.type", "etcd", "expected one of"),
    ("taskmanager.numberOfTaskSlots", 0, "expected a value >= 1"),
])
def test_ill_typed_values_name_the_key(key, value, expected):
    with pytest.raises(ConfigError, match=expected):
        Configuration({key: value})


def test_unknown_key_is_an_error_naming_it_with_a_suggestion():
    with pytest.raises(ConfigError, match=r"unknown config key 'taskmanager.numberOfSlots'.*numberOfTaskSlots"):
        Configuration({"taskmanager.numberOfSlots": 2})


@pytest.mark.parametrize("key, meant", [
    ("heartbeat.timout", "heartbeat.timeout"), ("rest.prot", "rest.port"),
    ("state.checkpoint.dir", "state.checkpoints.dir"), ("taskmanager.numberoftaskslots", "taskmanager.numberOfTaskSlots"),
    ("resourcemanager.taskmanager.timeout", "resourcemanager.taskmanager-timeout"), ("parallelism", "parallelism.default"),
])
def test_a_close_key_is_suggested(key, meant):
    with pytest.raises(ConfigError) as err:
        Configuration({key: "1"})
    assert str(err.value) == f"unknown config key '{key}'; did you mean '{meant}'?"


@pytest.mark.parametrize("key", ["no.such.key", "no.such", "rest", "my.timeout", "security.key"])
def test_a_key_close_to_none_gets_no_suggestion(key):
    """Sharing a last word (no.such.key, security.ssl.rest.key) or a first one (rest.*) is not being close."""
    with pytest.raises(ConfigError) as err:
        Configuration({key: "1"})
    assert str(err.value) == f"unknown config key '{key}'"


def test_yaml_errors_are_clear(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("rest.port: [1,\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        Configuration.load(str(bad), environ={})
    with pytest.raises(ConfigError, match="cannot read config file"):
        Configuration.load(str(tmp_path / "missing.yaml"), environ={})


@pytest.mark.parametrize("text,seconds", [("500 ms", 0.5), ("10s", 10), ("1 min", 60), (2000, 2.0), ("1.5 h", 5400)])
def test_durations(text, seconds):
    assert parse_duration(text) == seconds


def test_dynamic_properties_and_rendering_round_trip():
    props = parse_dynamic_properties(["heartbeat.interval=250 ms", "rest.port=0"])
    conf = Configuration(props)
    assert conf.as_strings() == {"heartbeat.interval": "250 ms", "rest.port": "0"}
    assert Configuration(conf.as_strings())["heartbeat.interval"] == 0.25
    with pytest.raises(ConfigError, match="expected key=value"):
        parse_dynamic_properties(["rest.port"])
    with pytest.raises(ConfigError, match="unknown config key"):
        parse_dynamic_properties(["no.such=1"])


def test_flink_entries_list_every_key_with_values_in_force():
    entries = {e["key"]: e["value"] for e in Configuration({"rest.port": 1234}).as_flink_entries()}
    assert entries["rest.port"] == "1234"
    assert entries["heartbeat.timeout"] == "6 s"


@pytest.mark.parametrize("text", ["500 ms", "1 s", "1 h", "90 min", "1500 ms", "0 ms"])
def test_formatted_durations_read_back_exactly(text):
    seconds = parse_duration(text)
    assert parse_duration(format_duration(seconds)) == seconds
