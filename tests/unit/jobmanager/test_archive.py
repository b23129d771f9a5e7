"""Job archives: the typed snapshots written and read back whole, other files refused by name, the
newest kept, and the read-only gateway that serves them refusing what would change a job."""
from __future__ import annotations

import dataclasses
import json

import pytest

from runtime.codec import WireError
from runtime.history.server import archive_directories, newest
from runtime.jobmanager.archive import ArchivedJob, decode, encode, read_archives, write_archive
from runtime.jobmanager.archived_jobs import ArchivedJobs
from runtime.jobmanager.gateways import OperationRefused, UnknownCheckpoint, UnknownJob
from runtime.snapshots import CheckpointConfigSnapshot, CheckpointRecord, CheckpointStatsSnapshot, FailureRecord
from runtime.config import ConfigError, Configuration
from runtime.states import JobStatus
from tests.unit.rest.conftest import CHECKPOINT, JOB, checkpoint_details, job_snapshot


def archived(job_id: str = JOB, state: JobStatus = JobStatus.FAILED, end: float = 100.0) -> ArchivedJob:
    job = job_snapshot()
    job = dataclasses.replace(job, summary=dataclasses.replace(job.summary, job_id=job_id, state=state, end_time=end))
    record = CheckpointRecord(CHECKPOINT, "COMPLETED", False, 1.0, 2.0, 1.0, 4000, 3, 3, external_path="file:///cp/7")
    stats = CheckpointStatsSnapshot(1, 1, 0, 0, 0, (record,), retained_paths={CHECKPOINT: "file:///cp/7"})
    failure = FailureRecord("ValueError", "ValueError: boom", 50.0, "Map (1/1)", "127.0.0.1", "tm-1", 0)
    config = CheckpointConfigSnapshot(1.0, 600.0, 0.0, 1, 0, "file:///cp", "file:///sp")
    return ArchivedJob(job, (failure,), stats, config, (checkpoint_details(),), 101.0)


def test_an_archive_reads_back_as_the_same_snapshots():
    original = archived()
    assert decode(encode(original), "x") == original
    back = decode(encode(original), "x")
    assert back.job.status_times == original.job.status_times and back.checkpoints.retained_paths == {7: "file:///cp/7"}


@pytest.mark.parametrize("data, says", [(b"{", "is not JSON"), (b'{"format": "flink"}', "its format is 'flink'"),
                                         (b'{"format": "flinkbench-job-archive/1", "archive": {}}', "missing field")])
def test_what_is_not_an_archive_of_this_version_is_refused_naming_the_file(data, says):
    with pytest.raises(WireError, match=says):
        decode(data, "archives/x.json")


def test_archives_are_written_whole_and_read_from_every_directory_skipping_bad_files(tmp_path, caplog):
    first, second = tmp_path / "a", tmp_path / "b"
    url = write_archive(str(first), archived("1" * 32))
    write_archive(str(second), archived("2" * 32, JobStatus.FINISHED))
    (second / ("3" * 32 + ".json")).write_text(json.dumps({"format": "other"}))
    (second / "notes.txt").write_text("not an archive")
    assert url == f"file://{first}/{'1' * 32}.json" and not list(first.glob("*.inprogress"))
    found = read_archives([str(first), f"file://{second}"])
    assert sorted(found) == ["1" * 32, "2" * 32] and found["2" * 32].job.summary.state == JobStatus.FINISHED
    assert "skipping the job archive " + "3" * 32 in caplog.text
    again = read_archives([str(first)], known=found)
    assert again["1" * 32] is found["1" * 32], "a known archive is not read again"


def test_the_history_server_keeps_the_newest_and_needs_a_directory():
    jobs = {j: archived(j, end=float(i + 1)) for i, j in enumerate(("a" * 32, "b" * 32, "c" * 32))}
    assert sorted(newest(jobs, 2)) == ["b" * 32, "c" * 32] and newest(jobs, -1) == jobs
    assert archive_directories(Configuration({"jobmanager.archive.fs.dir": "/x, s3://y/z"})) == ["/x", "s3://y/z"]
    with pytest.raises(ConfigError, match="historyserver.archive.fs.dir"):
        archive_directories(Configuration())


def test_the_archive_gateway_answers_reads_and_refuses_changes():
    gateway = ArchivedJobs({JOB: archived()})
    assert gateway.list_jobs()[0].job_id == JOB and gateway.job_status(JOB) == JobStatus.FAILED
    assert gateway.job_exceptions(JOB)[0].stacktrace == "ValueError: boom"
    assert gateway.checkpoint_details(JOB, CHECKPOINT).record.checkpoint_id == CHECKPOINT
    assert gateway.cluster_overview().jobs_failed == 1
    with pytest.raises(UnknownCheckpoint):
        gateway.checkpoint_details(JOB, 99)
    with pytest.raises(UnknownJob):
        gateway.request_job("f" * 32)
    for refused in (lambda: gateway.cancel_job(JOB), lambda: gateway.trigger_savepoint(JOB, None, False),
                    lambda: gateway.job_results(JOB, 0, 10), lambda: gateway.submit({})):
        with pytest.raises(OperationRefused):
            refused()
    with pytest.raises(OperationRefused, match=f"job {JOB} ended FAILED; there is nothing to cancel"):
        gateway.cancel_job(JOB)
