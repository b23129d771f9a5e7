"""Job commands without a cluster: how `list` lays out jobs, and what `run` hands the program it runs."""
from __future__ import annotations

import argparse

import pytest

from runtime.api.environment import ProgramContext, StreamExecutionEnvironment, program_context
from runtime.cli import jobs
from runtime.config import ConfigError


class FakeRest:
    """Answers like a JobManager would, for the one call each test makes."""

    def __init__(self, listed=()):
        self.listed = list(listed)
        self.submitted: list[dict] = []

    def jobs(self):
        return self.listed

    def submit(self, graph):
        self.submitted.append(graph)
        return FakeJob(f"{len(self.submitted):032x}")


class FakeJob:
    def __init__(self, job_id):
        self.job_id = job_id
        self.waited = False

    def wait(self, timeout=None):
        self.waited = True
        return "FINISHED"


def listed(state, name, start):
    return {"jid": f"{start:032x}", "name": name, "state": state, "start-time": start * 1000}


def test_list_shows_flinks_sections(monkeypatch, capsys):
    rest = FakeRest([listed("FINISHED", "old", 1_700_000_000), listed("RUNNING", "clicks", 1_700_000_100),
                        listed("RESTARTING", "flaky", 1_700_000_050)])
    monkeypatch.setattr(jobs, "client", lambda args: rest)
    jobs.list_jobs(argparse.Namespace(running=False, all=False))
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "------------------ Running/Restarting Jobs -------------------"
    assert out[1].endswith(f": {1_700_000_050:032x} : flaky (RESTARTING)")
    assert out[2].endswith(f": {1_700_000_100:032x} : clicks (RUNNING)")
    assert out[3:] == ["-" * 62, "No scheduled jobs."]
    jobs.list_jobs(argparse.Namespace(running=False, all=True))
    assert f"{1_700_000_000:032x} : old (FINISHED)" in capsys.readouterr().out
    jobs.list_jobs(argparse.Namespace(running=True, all=False))
    assert "Scheduled" not in capsys.readouterr().out


def build(env):
    env.from_collection([{"x": 1}], schema="x BIGINT").collect()


def test_run_context_sets_defaults_the_program_overrides_and_records_jobs():
    rest = FakeRest()
    context = ProgramContext({"parallelism.default": "3", "pipeline.max-parallelism": "64"}, False, "file:///sp")
    with program_context(context):
        env = StreamExecutionEnvironment(rest)
        env.set_parallelism(2)
        build(env)
        job = env.execute("attached")
    assert env.config["parallelism.default"] == "2" and env.config["pipeline.max-parallelism"] == "64"
    assert rest.submitted[0]["restore_from"] == "file:///sp"
    assert context.submitted == [job] and job.waited
    assert StreamExecutionEnvironment(rest).config == {}  # outside the block: no context


def test_detached_execute_returns_once_submitted():
    rest, announced = FakeRest(), []
    with program_context(ProgramContext({}, True, on_submit=announced.append)) as context:
        env = StreamExecutionEnvironment(rest)
        build(env)
        job = env.execute("detached")
    assert not job.waited and context.submitted == announced == [job]


def test_target_speaks_https_and_trusts_the_ca_when_rest_tls_is_on(monkeypatch):
    for name in ("FLINKBENCH_JOBMANAGER_URL", "FLINKBENCH_TOKEN_FILE", "FLINKBENCH_SECURITY_SSL_REST_ENABLED",
                 "FLINKBENCH_SECURITY_SSL_REST_TRUST_CERT"):
        monkeypatch.delenv(name, raising=False)
    flags = argparse.Namespace(jobmanager="127.0.0.1:8081", token_file="/t")
    assert jobs.target(flags) == ("http://127.0.0.1:8081", "/t", None)
    monkeypatch.setenv("FLINKBENCH_SECURITY_SSL_REST_ENABLED", "true")
    monkeypatch.setenv("FLINKBENCH_SECURITY_SSL_REST_TRUST_CERT", "/etc/ca.pem")
    assert jobs.target(flags) == ("https://127.0.0.1:8081", "/t", "/etc/ca.pem")
    monkeypatch.delenv("FLINKBENCH_SECURITY_SSL_REST_TRUST_CERT")
    recorded = {"url": "https://127.0.0.1:9000", "token_file": "/r", "trust_cert": "/r/ca.pem"}
    monkeypatch.setattr(jobs, "recorded", lambda: recorded)
    assert jobs.target(argparse.Namespace(jobmanager=None, token_file=None)) == ("https://127.0.0.1:9000", "/r", "/r/ca.pem")


@pytest.mark.parametrize("dynamic, parallelism, problem", [
    (["parallelism.default=notanumber"], 2, "config key 'parallelism.default': expected an integer, got 'notanumber'"),
    (["parallelism.default=notanumber"], None, "config key 'parallelism.default': expected an integer"),
    (["heartbeat.timeout=soon"], 2, "config key 'heartbeat.timeout': expected a duration"),
    (["no.such.key=1"], 2, "unknown config key 'no.such.key'"),
    ([], 0, "config key 'parallelism.default': expected a value >= 1"),
])
def test_run_refuses_every_bad_setting_whatever_the_other_flags(dynamic, parallelism, problem):
    with pytest.raises(ConfigError) as err:
        jobs.job_settings(dynamic, parallelism)
    assert problem in str(err.value)


def test_run_settings_take_p_over_the_same_key_in_d():
    assert jobs.job_settings(["parallelism.default=3", "heartbeat.timeout=5 s"], 2) == \
        {"parallelism.default": "2", "heartbeat.timeout": "5 s"}
    assert jobs.job_settings(["parallelism.default=3"], None) == {"parallelism.default": "3"}
