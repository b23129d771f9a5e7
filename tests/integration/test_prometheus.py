"""The Prometheus endpoints (metrics.reporter.prom.port) of a live cluster: scraped during a job, with the
cluster token, the TaskManager's show the job's record counts rising and the JobManager's its checkpoints,
all under Flink's metric names, each job labelled with its user; a user's scrape shows their own jobs only."""
from __future__ import annotations

import urllib.error
import urllib.request

import pytest
from prometheus_client.parser import text_string_to_metric_families

from runtime.security import read_token_file
from tests.helpers.clusters import wait_until
from tests.helpers.ports import free_port_range


def scrape(port: int, token: str | None) -> dict[tuple[str, frozenset], float]:
    request = urllib.request.Request(f"http://127.0.0.1:{port}/metrics",
                                     headers={"Authorization": f"Bearer {token}"} if token else {})
    text = urllib.request.urlopen(request, timeout=10).read().decode()
    return {(s.name, frozenset(s.labels.items())): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def total(samples, name: str, job_id: str) -> float:
    return sum(v for (n, labels), v in samples.items() if n == name and ("job_id", job_id) in labels)


def test_scraping_during_a_job_shows_its_record_counts_rising(fresh_cluster):
    first = free_port_range(4)
    cluster = fresh_cluster(taskmanagers=1, slots=1, **{"metrics.reporter.prom.port": f"{first}-{first + 3}"})
    token = read_token_file(cluster.token_file)
    env = cluster.environment()
    env.enable_checkpointing("1 s")
    env.datagen("seq BIGINT", rows_per_second=2_000, fields={"seq": {"kind": "sequence"}}).blackhole()
    job = env.execute_async("scraped")

    def taskmanager_port():
        for port in range(first, first + 4):
            try:
                if total(scrape(port, token), "flink_taskmanager_job_task_numRecordsOut", job.job_id) > 0:
                    return port
            except OSError:
                continue
        return None

    port = wait_until(taskmanager_port, 120, "a TaskManager endpoint that reports the job's records")
    before = total(scrape(port, token), "flink_taskmanager_job_task_numRecordsOut", job.job_id)
    wait_until(lambda: total(scrape(port, token), "flink_taskmanager_job_task_numRecordsOut", job.job_id) > before,
               30, "the job's numRecordsOut to rise")
    samples = scrape(port, token)
    assert total(samples, "flink_taskmanager_job_task_numRecordsIn", job.job_id) > 0
    assert [labels for (n, labels) in samples if n == "flink_taskmanager_job_task_numRecordsOut"
            and ("job_name", "scraped") in labels and ("subtask_index", "0") in labels]

    # The JobManager and the TaskManager start together and each takes a free port of the range, as in Flink.
    jm_port = next(p for p in range(first, first + 4) if p != port
                   and any(n == "flink_jobmanager_numRegisteredTaskManagers" for n, _ in scrape(p, token)))
    jobmanager = scrape(jm_port, token)
    assert jobmanager[("flink_jobmanager_numRegisteredTaskManagers", frozenset({("host", "127.0.0.1")}))] == 1
    assert jobmanager[("flink_jobmanager_taskSlotsTotal", frozenset({("host", "127.0.0.1")}))] == 1
    wait_until(lambda: total(scrape(jm_port, token), "flink_jobmanager_job_numberOfCompletedCheckpoints", job.job_id) >= 1,
               60, "a completed checkpoint in the JobManager's metrics")
    jobmanager = scrape(jm_port, token)
    assert total(jobmanager, "flink_jobmanager_job_lastCheckpointDuration", job.job_id) > 0
    assert total(jobmanager, "flink_jobmanager_job_numRestarts", job.job_id) == 0
    assert total(jobmanager, "flink_jobmanager_job_uptime", job.job_id) > 0
    assert [labels for (n, labels) in jobmanager if n == "flink_jobmanager_job_uptime" and ("user", "admin") in labels]

    # A user's scrape of the JobManager holds their own jobs only; a TaskManager's endpoint takes the cluster token.
    grace = cluster.client.post("/users", {"name": "grace"})["token"]
    theirs = scrape(jm_port, grace)
    assert total(theirs, "flink_jobmanager_job_uptime", job.job_id) == 0 and not [
        n for (n, labels) in theirs if ("job_id", job.job_id) in labels]
    assert theirs[("flink_jobmanager_numRunningJobs", frozenset({("host", "127.0.0.1")}))] == 0
    with pytest.raises(urllib.error.HTTPError) as user_at_taskmanager:
        scrape(port, grace)
    assert user_at_taskmanager.value.code == 401

    with pytest.raises(urllib.error.HTTPError) as refused:
        scrape(port, None)
    assert refused.value.code == 401
    with pytest.raises(urllib.error.HTTPError) as wrong:
        scrape(port, "x" * 43)
    assert wrong.value.code == 401
    job.cancel()
