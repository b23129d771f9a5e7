"""The cluster core on real processes: placement, exchange, results, REST views."""
from __future__ import annotations

import collections

from runtime.api.functions import col

ROWS = 40_000


def seq_source(env, rows=ROWS, **options):
    """A datagen stream whose seq column counts 0, 1, 2, ... so results can be checked exactly."""
    return env.datagen("seq BIGINT, user INT, amount DOUBLE", number_of_rows=rows,
                       fields={"seq": {"kind": "sequence"}, "user": {"min": 0, "max": 49}}, **options)


def test_overview_reports_the_demo_cluster(cluster):
    overview = cluster.client.overview()
    assert overview["taskmanagers"] == 2
    assert overview["slots-total"] == 4
    assert overview["leader"]["url"] == cluster.url


def test_parallelism_four_job_spreads_over_both_task_managers_with_exact_result(cluster):
    env = cluster.environment()
    env.set_parallelism(4)
    seq_source(env).filter(col("seq") % 5 == 0).with_columns(double="seq * 2").collect()
    job = env.execute_async("spread")
    rows = job.results(timeout=240)
    assert sorted(rows.column("seq").to_pylist()) == list(range(0, ROWS, 5))
    assert all(r["double"] == 2 * r["seq"] for r in rows.to_pylist())
    assert job.results().equals(rows), "results() gives every row on each call"
    details = job.details()
    assert details["state"] == "FINISHED"
    (vertex,) = details["vertices"]
    placements = {(s["taskmanager-id"], s["slot"]) for s in vertex["subtasks"]}
    assert len(placements) == 4, "each subtask has its own slot"
    assert len({tm for tm, _ in placements}) == 2, "subtasks spread over both TaskManagers"
    assert sum(s["metrics"]["records_in"] for s in vertex["subtasks"]) == ROWS


def test_keyed_exchange_crosses_task_managers_and_python_functions_run(cluster):
    env = cluster.environment()
    env.set_parallelism(2)

    def cents(frame):
        return frame.assign(cents=(frame["amount"] * 100).round().astype("int64"))[["seq", "user", "cents"]]

    (seq_source(env)
        .map(cents)
        .key_by("user")
        .filter(lambda frame: frame["seq"] % 2 == 0).set_parallelism(3)
        .collect().set_parallelism(1))
    job = env.execute_async("keyed")
    rows = job.results(timeout=240)
    assert sorted(rows.column("seq").to_pylist()) == list(range(0, ROWS, 2))
    assert "__key_group" not in rows.column_names
    details = job.details()
    assert len(details["vertices"]) == 3
    keyed = details["vertices"][1]
    assert keyed["parallelism"] == 3
    source_tms = {s["taskmanager-id"] for s in details["vertices"][0]["subtasks"]}
    assert len(source_tms) == 2
    sent = collections.Counter()
    for sub in details["vertices"][0]["subtasks"]:
        for channel, count in sub["metrics"]["sent_to"].items():
            sent[int(channel)] += count
    assert sum(sent.values()) == ROWS and len(sent) == 3, sent
    consumers = {s["subtask"]: s["taskmanager-id"] for s in keyed["subtasks"]}
    crossing = [ch for ch, n in sent.items() if n and any(tm != consumers[ch] for tm in source_tms)]
    assert crossing, "some records went from one TaskManager to another"


def test_cancel_stops_a_running_job(cluster):
    env = cluster.environment()
    seq_source(env, rows=None, rows_per_second=1000).blackhole()
    job = env.execute_async("endless")
    from tests.helpers.clusters import wait_until
    wait_until(lambda: job.status() == "RUNNING", 120, "job running")
    job.cancel()
    assert job.wait(60) == "CANCELED"
    wait_until(lambda: cluster.client.overview()["slots-available"] == 4, 30, "slots freed")
