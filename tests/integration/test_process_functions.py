"""Keyed process functions on real processes: keyed state, event- and processing-time timers, savepoints."""
from __future__ import annotations

import json
import sys

import cloudpickle
import pytest

from runtime.api import KeyedProcessFunction, ValueStateDescriptor
from runtime.api.windows import WatermarkStrategy
from runtime.client import JobFailed
from runtime.taskmanager.window_operator import END_OF_TIME
from tests.helpers.clusters import job_state, wait_until

cloudpickle.register_pickle_by_value(sys.modules[__name__])  # TaskManagers cannot import this test module

ROWS = 3_000
RATE = 250  # rows/s: watermarks advance many times while a run lasts (12 s)
T0_MS = 1_700_000_000_000
STEP_MS = 100  # event time between consecutive rows
GAP_MS = 5_000  # a user inactive this long has ended a session
SCHEMA = "user BIGINT, kind STRING, n BIGINT, at_ms BIGINT, by STRING"


def user_of(seq: int) -> int:
    """Bursts of 20 rows per user, users coming back after 20 to 280 rows: short and long gaps."""
    burst = seq // 20
    return (burst * burst + burst // 3) % 5


class SessionCounter(KeyedProcessFunction):
    """Per user: a running count of rows, and "session ended" once the user was inactive for GAP_MS.

    The session normally ends by its event-time timer; when a row past the gap arrives before the
    watermark fired the timer (both in one bundle), the row ends the old session first.
    """

    def open(self, ctx):
        self.count = ctx.get_state(ValueStateDescriptor("count", 0))
        self.session = ctx.get_state(ValueStateDescriptor("session", 0))
        self.deadline = ctx.get_state(ValueStateDescriptor("deadline"))

    def process_element(self, row, ctx, out):
        ts, timers, deadline = ctx.timestamp(), ctx.timer_service(), self.deadline.value()
        if deadline is not None:
            timers.delete_event_time_timer(deadline)
            if ts >= deadline:
                self.end_session(deadline, "row", ctx, out)
        self.count.update(self.count.value() + 1)
        self.session.update(self.session.value() + 1)
        self.deadline.update(ts + GAP_MS)
        timers.register_event_time_timer(ts + GAP_MS)
        out.collect({"user": row["user"], "kind": "count", "n": self.count.value(), "at_ms": ts, "by": "row"})

    def on_timer(self, timestamp, ctx, out):
        at_end = ctx.timer_service().current_watermark() == END_OF_TIME
        self.end_session(timestamp, "end of input" if at_end else "timer", ctx, out)

    def end_session(self, at, by, ctx, out):
        out.collect((ctx.get_current_key(), "session ended", self.session.value(), at, by))
        self.session.clear()
        self.deadline.clear()


def expected(rows: int) -> list[tuple]:
    """The same answer computed in plain Python over the same input."""
    count, session, last, out = {}, {}, {}, []
    for seq in range(rows):
        user, ts = user_of(seq), T0_MS + seq * STEP_MS
        if user in last and ts >= last[user] + GAP_MS:
            out.append((user, "session ended", session.pop(user), last[user] + GAP_MS))
        count[user] = count.get(user, 0) + 1
        session[user] = session.get(user, 0) + 1
        last[user] = ts
        out.append((user, "count", count[user], ts))
    out += [(user, "session ended", session[user], last[user] + GAP_MS) for user in last]
    return sorted(out)


def build(env, parallelism: int):
    """The sequence source (one subtask: each user's rows arrive in order) -> SessionCounter x parallelism."""
    (env.datagen("seq BIGINT", number_of_rows=ROWS, rows_per_second=RATE, fields={"seq": {"kind": "sequence"}})
        .with_columns(user="pmod((seq DIV 20) * (seq DIV 20) + (seq DIV 20) DIV 3, 5)",
                      ts=f"timestamp_millis({T0_MS} + seq * {STEP_MS})")
        .assign_timestamps_and_watermarks(WatermarkStrategy.for_monotonous_timestamps().with_timestamp_column("ts"))
        .key_by("user")
        .process(SessionCounter(), schema=SCHEMA).set_parallelism(parallelism)
        .collect())


def answer(*tables) -> list[tuple]:
    return sorted((r["user"], r["kind"], r["n"], r["at_ms"]) for t in tables for r in t.to_pylist())


def test_running_counts_and_session_timeouts_match_a_plain_python_answer(cluster):
    env = cluster.environment()
    build(env, parallelism=2)
    job = env.execute_async("sessions")
    got = job.results(timeout=300)
    assert answer(got) == expected(ROWS)
    last_ts = T0_MS + (ROWS - 1) * STEP_MS
    ended = [(r["by"], r["at_ms"]) for r in got.to_pylist() if r["kind"] == "session ended"]
    assert {by for by, at in ended if at >= last_ts} == {"end of input"}, "sessions open at the end end with it"
    assert "timer" in {by for by, at in ended if at < last_ts}, "watermarks fired timers while input was running"


def test_state_and_timers_survive_stop_with_savepoint_and_resume_at_another_parallelism(cluster, tmp_path):
    env = cluster.environment()
    build(env, parallelism=2)
    first = env.execute_async("sessions p2")
    wait_until(lambda: cluster.client.get(f"/jobs/{first.job_id}/results?offset=0&limit=0")["total"] > 0,
               180, "first results")
    savepoint = first.savepoint(str(tmp_path / "savepoints"), stop=True)
    wait_until(lambda: job_state(cluster.client, first.job_id) == "FINISHED", 60, "the job stopped")
    before = first.results(timeout=60)

    env = cluster.environment()
    env.from_savepoint(savepoint)
    build(env, parallelism=1)
    after = env.execute_async("sessions p1").results(timeout=300)
    assert before.num_rows and after.num_rows, "the savepoint was taken while input was left"
    assert answer(before, after) == expected(ROWS), "counts and open sessions went on where they stopped"


class Reminder(KeyedProcessFunction):
    """One processing-time timer per user, 1 s after its first row; the timer says how late it fired."""

    def process_element(self, row, ctx, out):
        first = ctx.get_state(ValueStateDescriptor("first_seen"))
        if first.value() is None:
            now = ctx.timer_service().current_processing_time()
            first.update(now)
            ctx.timer_service().register_processing_time_timer(now + 1_000)
        out.collect((row["user"], "row", 0))

    def on_timer(self, timestamp, ctx, out):
        out.collect((ctx.get_current_key(), "reminder", ctx.timer_service().current_processing_time() - timestamp))


def test_processing_time_timers_fire_while_no_rows_arrive(cluster, tmp_path):
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    (inbox / "rows.json").write_text("".join(json.dumps({"user": u}) + "\n" for u in (1, 2, 3, 2)))
    env = cluster.environment()
    env.set_parallelism(2)
    (env.read_files(str(inbox), "json", "user BIGINT", monitor_interval="1 s")  # never ends: watches for files
        .key_by("user").process(Reminder(), schema="user BIGINT, kind STRING, late_ms BIGINT").collect())
    job = env.execute_async("reminders")
    try:
        got = wait_until(lambda: (t := job.fetch(0)[0]).num_rows == 7 and t, 180, "three reminders").to_pylist()
        assert job_state(cluster.client, job.job_id) == "RUNNING"
    finally:
        job.cancel()
    reminders = sorted((r["user"], r["late_ms"]) for r in got if r["kind"] == "reminder")
    assert [u for u, _ in reminders] == [1, 2, 3]
    assert all(late >= 0 for _, late in reminders), "no timer fires before it is due"
    wait_until(lambda: job_state(cluster.client, job.job_id) == "CANCELED", 60, "the job cancelled")


class Explodes(KeyedProcessFunction):
    def process_element(self, row, ctx, out):
        if row["user"] == 3:
            raise ArithmeticError(f"user {row['user']} has no sessions")
        out.collect({"user": row["user"], "n": "many"})


@pytest.mark.parametrize("users,message", [
    ([3], "ArithmeticError: user 3 has no sessions"),
    ([1], "column 'n' (int64) cannot hold 'many' (str)"),
])
def test_a_failing_function_or_a_bad_row_fails_the_job_naming_the_operator(cluster, users, message):
    env = cluster.environment()
    env.from_collection([{"user": u} for u in users]).key_by("user") \
        .process(Explodes(), schema="user BIGINT, n BIGINT").collect()
    job = env.execute_async("explodes")
    with pytest.raises(JobFailed) as failure:
        job.wait(120)
    assert "OperatorError: operator 'KeyedProcess(Explodes)'" in failure.value.cause
    assert message in failure.value.cause
