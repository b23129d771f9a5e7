"""The chaos run's reading of a job's details: when does a JobManager serve the job running?"""
from __future__ import annotations

from tests.chaos.probes import running


def job(state: str, *subtasks: str) -> dict:
    return {"state": state, "vertices": [{"subtasks": [{"status": s} for s in subtasks]}]}


def test_a_job_runs_when_every_subtask_runs_or_has_finished_its_input():
    assert running(job("RUNNING", "RUNNING", "RUNNING"))
    assert running(job("RUNNING", "FINISHED", "RUNNING")), "a source whose input ended, the rest still running"
    assert running(job("FINISHED", "FINISHED", "FINISHED")), "it ran to its end under this JobManager"


def test_a_job_being_deployed_restarted_or_failed_does_not():
    assert not running(job("RUNNING", "DEPLOYING", "RUNNING"))
    assert not running(job("RUNNING", "FINISHED", "CANCELING"))
    assert not running(job("RESTARTING", "RUNNING", "RUNNING"))
    assert not running(job("FAILED", "FAILED"))
    assert not running(job("RUNNING"))
