"""A subtask's drill-down into its Spark work, on real Spark drivers.

The recorder (runtime.taskmanager.spark_work) against a real driver: two threads tagged as two subtasks each get
exactly the stages their own jobs ran, as Spark's own job groups attribute them. Then a job with a deliberately
skewed key, on a TaskManager with Spark's default settings: the bottleneck hint names the subtask that holds the
hot key (found independently, from the key's key group) and the part of its time that dominates it (Spark's
optimizer computes the keyed task's projection of each bundle on the driver, outside any stage:
ConvertToLocalRelation), and that subtask's drill-down lists its stages slowest first, and its stages, its driver
time and its TaskManager's own work, each measured on its own, add up to its measured busy time over a window
within 20 %. The TaskManager's Spark UI opens
through the Dispatcher with the cluster token and is refused without it.
"""
from __future__ import annotations

import threading
import urllib.error
import urllib.request
from types import SimpleNamespace

import pytest

from runtime.api import KeyedProcessFunction
from runtime.keygroups import key_group_sql, operator_index_for_key_group
from runtime.taskmanager.spark_work import SparkWorkRecorder
from runtime.views.graph import job_graph, plan_from_json, subtasks_from_details
from tests.helpers.clusters import started_cluster, wait_until

pytestmark = pytest.mark.slow

KEYED_PARALLELISM = 3
MAX_PARALLELISM = 128
HOT_KEY = 0
ROWS_PER_SECOND = 500
# Per row, a loop of 30,000 hashes (seq * 0 keeps the optimizer from folding the sequence into a literal): the keyed
# task's work is Spark's, and the hot subtask has four times the work of the others together. Under Spark's
# defaults the optimizer evaluates it on the driver, interpreted (about 0.3 us a hash on 2 loaded cores): a bundle
# of 2,000 rows takes seconds there, far beyond the 400 rows a second the hot key brings.
HEAVY = "aggregate(sequence(1, 30000 + CAST(seq * 0 AS INT)), CAST(0 AS BIGINT), (acc, x) -> acc ^ xxhash64(seq, x))"
BUNDLES = {"taskmanager.bundle.min-rows": "2000", "taskmanager.bundle.max-wait": "10 s"}
WINDOW_S = 120.0  # the longest a bundle of the hot subtask is waited for


def subtask(attempt: str, index: int) -> SimpleNamespace:
    return SimpleNamespace(attempt_id=attempt, task_name="Count", subtask_index=index, parallelism=2)


def test_the_recorder_gives_each_subtask_the_stages_its_own_jobs_ran(spark):
    recorder = SparkWorkRecorder(lambda: spark, None)
    attempts = {0: "a" * 32, 1: "b" * 32}
    recorder.read()  # a first read may find the driver's store without any stage yet (a fresh driver's)

    def bundles(index: int, count: int):
        recorder.enter(subtask(attempts[index], index))
        for _ in range(count):  # two partitions: a grouped count shuffles
            spark.range(0, 20_000, 1, 2).selectExpr("id % 10 AS k").groupBy("k").count().toArrow()

    threads = [threading.Thread(target=bundles, args=(i, 2 + i)) for i in (0, 1)]
    [t.start() for t in threads]
    [t.join(120) for t in threads]
    recorder.read()
    work = {i: recorder.take(attempts[i]) for i in (0, 1)}
    tracker = spark.sparkContext.statusTracker()
    for i, w in work.items():
        by_group = set(tracker.getJobIdsForGroup(attempts[i]))  # Spark's own attribution, by job group
        assert len(by_group) >= 2 + i and {j for s in w.stages for j in s.job_ids} == by_group, (i, by_group, w)
        assert any("Exchange" in s.plan for s in w.stages), [s.plan for s in w.stages]
        assert w.total_stages == len(w.stages) and w.total_stage_ms == sum(s.duration_ms for s in w.stages)
    assert not {s.stage_id for s in work[0].stages} & {s.stage_id for s in work[1].stages}
    assert recorder.take(attempts[0]).stages == [], "each stage is handed over once"


class PassThrough(KeyedProcessFunction):
    def process_element(self, row, ctx, out):
        out.collect(row)


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    """A cluster of its own: one TaskManager of 4 slots whose Spark driver serves its UI; Spark's optimizer as it
    comes (no rule excluded)."""
    with started_cluster(tmp_path_factory.mktemp("drilldown"), taskmanagers=1, slots=4, config={
            "spark.ui.enabled": "true", **BUNDLES}) as cluster:
        yield cluster


def hot_subtask(spark) -> int:
    """The keyed subtask the hot key goes to, from its key group as the exchange computes it."""
    group = spark.sql(f"SELECT {key_group_sql(['key'], MAX_PARALLELISM)} AS g FROM (SELECT {HOT_KEY} AS key)").first()["g"]
    return int(operator_index_for_key_group(int(group), MAX_PARALLELISM, KEYED_PARALLELISM))


@pytest.fixture
def skewed_job(engine):
    """Eight rows in ten carry the hot key; the rest spread over five more keys. Cancelled at the end."""
    env = engine.environment()
    env.set_parallelism(KEYED_PARALLELISM)
    env.set_max_parallelism(MAX_PARALLELISM)
    (env.datagen("seq BIGINT", rows_per_second=ROWS_PER_SECOND, fields={"seq": {"kind": "sequence"}}).set_parallelism(1)
        .with_columns(key=f"IF(seq % 10 < 8, {HOT_KEY}, 1 + seq % 5)").set_parallelism(1)
        .key_by("key").process(PassThrough(), schema="seq BIGINT, key BIGINT").name("Heavy")
        .with_columns(h=HEAVY).blackhole())
    job = env.execute_async("skewed key")
    yield job
    job.cancel()


@pytest.mark.timeout(900)
def test_a_skewed_keys_hot_subtask_is_named_and_its_stages_explain_its_busy_time(engine, spark, skewed_job):
    hot, client = hot_subtask(spark), engine.client
    named = f"({hot + 1}/{KEYED_PARALLELISM}) at"
    seen: list[str] = []

    def hint() -> str | None:
        details = client.get(f"/jobs/{skewed_job.job_id}")
        seen.append(job_graph(skewed_job.job_id, plan_from_json(details["plan"]), subtasks_from_details(details)).hint)
        return seen[-1] if named in seen[-1] and "Spark's driver" in seen[-1] else None

    vertex = wait_until(lambda: next((v for v in client.get(f"/jobs/{skewed_job.job_id}")["vertices"]
                                      if v["name"].startswith("Heavy")), None), 60, "the keyed task")
    drill = f"/jobs/{skewed_job.job_id}/vertices/{vertex['id']}/subtasks/%d/spark"
    try:
        found = wait_until(hint, 400, f"the hint naming subtask {hot + 1} and Spark's driver", interval=2.0)
    except AssertionError:
        totals = {k: v for k, v in client.get(drill % hot).items() if k not in ("stages", "plans")}
        raise AssertionError(f"hints seen last: {seen[-3:]}; the hot subtask's totals: {totals}") from None
    assert found.startswith("Heavy"), seen[-5:]

    def after_stages(count: int, timeout: float) -> dict:
        return wait_until(lambda: (lambda d: d if d["stage-count"] >= count else None)(client.get(drill % hot)),
                          timeout, f"{count} stages of the hot subtask", interval=0.5)

    # A window of whole bundles, after the warm-up: from just after one of its stages is reported to just after
    # the third one after it (each snapshot a report's totals: its busy time and its stages so far).
    first = after_stages(client.get(drill % hot)["stage-count"] + 1, WINDOW_S)
    last = after_stages(first["stage-count"] + 3, 4 * WINDOW_S)
    durations = [s["duration"] for s in last["stages"]]
    assert durations and durations == sorted(durations, reverse=True), "slowest first"
    assert last["dominant-part"] == "driver", last["parts"]
    parts = {p["part"]: p["time"] - next(q["time"] for q in first["parts"] if q["part"] == p["part"]) for p in last["parts"]}
    explained = (parts["stages"] + parts["driver"] + parts["taskmanager"]) / (last["busy-time"] - first["busy-time"])
    phases = {k: round(v - first["phases"].get(k, 0.0), 2) for k, v in last["phases"].items()}
    assert 0.8 <= explained <= 1.2, (explained, last["busy-time"] - first["busy-time"], parts, phases,
                                     last["stage-count"] - first["stage-count"], durations[:8])
    subtasks = client.get(f"/jobs/{skewed_job.job_id}/vertices/{vertex['id']}")["subtasks"]
    rows = {s["subtask"]: s["metrics"]["read-records"] for s in subtasks}
    assert all(rows[hot] > 2 * n for i, n in rows.items() if i != hot), ("the hot key's subtask reads the most", rows)


def test_the_spark_ui_opens_through_the_dispatcher_with_the_token_and_not_without(engine):
    tm_id = wait_until(lambda: next((tm["id"] for tm in engine.client.get("/taskmanagers")["taskmanagers"]
                                     if engine.client.get(f"/taskmanagers/{tm['id']}").get("sparkUiUrl")), None),
                       120, "a TaskManager's Spark UI link")
    link = engine.client.get(f"/taskmanagers/{tm_id}")["sparkUiUrl"]
    assert link == f"/taskmanagers/{tm_id}/spark-ui/"
    status, headers, page = fetch(engine.url + link + "jobs/", engine.token)
    assert status == 200 and b"Spark Jobs" in page, page[:300]
    assert f'href="/taskmanagers/{tm_id}/spark-ui/'.encode() in page, "Spark's links come back through the proxy"
    assert fetch(engine.url + link + "jobs/", None)[0] == 401
    assert fetch(engine.url + link + "jobs/", "x" * 43)[0] == 401
    status, headers, _ = fetch(engine.url + link + f"jobs/?token={engine.token}", None)
    assert status == 200 and "flinkbench_token" in headers.get("Set-Cookie", ""), "a browser keeps the token"


def fetch(url: str, token: str | None) -> tuple[int, dict, bytes]:
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"} if token else {})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers), err.read()
