"""The flinkbench command line: Flink's flags parse to what the commands expect, and every positional
argument explains itself."""
from __future__ import annotations

import argparse

import pytest

from runtime.cli import main, parser
from runtime.cli.processes import jobmanager_url


def positionals(p: argparse.ArgumentParser, path: str = "flinkbench"):
    for action in p._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help for a in action._choices_actions}
            for name, sub in action.choices.items():
                yield f"{path} {name}", helps.get(name)
                yield from positionals(sub, f"{path} {name}")
        elif not action.option_strings:
            yield f"{path} <{action.dest}>", action.help


def test_every_command_and_positional_argument_has_help():
    missing = [where for where, text in positionals(parser()) if not text]
    assert missing == []


def test_flink_style_flags_of_run():
    args = parser().parse_args(["run", "-m", "127.0.0.1:8081", "-p", "3", "-D", "execution.checkpointing.interval=1 s",
                                "-s", "file:///sp/1", "-d", "job.py", "--rows", "10"])
    assert (args.jobmanager, args.parallelism, args.dynamic, args.from_savepoint, args.detached) == \
        ("127.0.0.1:8081", 3, ["execution.checkpointing.interval=1 s"], "file:///sp/1", True)
    assert (args.file, args.args) == ("job.py", ["--rows", "10"])
    assert parser().parse_args(["run", "job.py"]).detached is False


@pytest.mark.parametrize("argv, expected", [
    (["list"], (False, False)), (["list", "-r"], (True, False)), (["list", "-a"], (False, True)),
])
def test_list_flags(argv, expected):
    args = parser().parse_args(argv)
    assert (args.running, args.all) == expected


def test_stop_savepoint_and_checkpoint_flags():
    stop = parser().parse_args(["stop", "--drain", "-p", "/tmp/sp", "abc"])
    assert (stop.job_id, stop.target, stop.drain) == ("abc", "/tmp/sp", True)
    dispose = parser().parse_args(["savepoint", "--dispose", "file:///tmp/sp/savepoint-1"])
    assert (dispose.dispose, dispose.job_id) == ("file:///tmp/sp/savepoint-1", None)
    assert parser().parse_args(["checkpoint", "abc", "--full"]).full is True
    start = parser().parse_args(["cluster", "start", "--detach", "--conf", "c.yaml", "-D", "a=b"])
    assert (start.detach, start.conf, start.dynamic, start.slots) == (True, "c.yaml", ["a=b"], None)
    assert start.taskmanagers == 1  # one TaskManager, as Flink's local cluster; the local provider adds more


def test_savepoint_needs_a_job_or_a_path_to_dispose(capsys):
    for argv in (["savepoint"], ["savepoint", "abc", "--dispose", "/tmp/x"]):
        with pytest.raises(SystemExit) as exit_:
            main(argv)
        assert exit_.value.code == 2
        assert "give a JOB" in capsys.readouterr().err


@pytest.mark.parametrize("given, url", [
    ("127.0.0.1:8081", "http://127.0.0.1:8081"),
    ("http://jm:8081", "http://jm:8081"),
    ("a:1, b:2", "http://a:1,http://b:2"),
])
def test_dash_m_takes_host_and_port_or_urls(given, url):
    assert jobmanager_url(given) == url


def test_a_command_without_a_cluster_says_how_to_name_one(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HOME", str(tmp_path))
    for name in ("FLINKBENCH_JOBMANAGER_URL", "FLINKBENCH_TOKEN_FILE"):
        monkeypatch.delenv(name, raising=False)
    assert main(["list"]) == 2
    assert capsys.readouterr().err.strip() == ("flinkbench: no cluster given: pass -m HOST:PORT --token-file F, "
                                               "or start one with 'flinkbench cluster start'")
