"""The keyed process operator alone: state per key, timers, snapshots split by key group, bad output."""
from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pytest

from runtime.api.process import (EVENT_TIME, PROCESSING_TIME, KeyedProcessFunction, ListStateDescriptor,
                                 MapStateDescriptor, ValueStateDescriptor)
from runtime.jobgraph import OperatorSpec, pack_udf
from runtime.keygroups import KEY_GROUP_COLUMN, KeyGroupRange
from runtime.taskmanager.chain import OperatorChain, OperatorError
from runtime.taskmanager.process_operator import KeyedProcessOperator, OutputRowError
from runtime.taskmanager.window_operator import END_OF_TIME

MAX_PARALLELISM = 128
T0 = 1_700_000_000_000  # ms


def bundle(*rows: tuple[int, int]) -> pa.Table:
    """(user, event time in ms) rows as the exchange delivers them: with event time and key group."""
    users = [u for u, _ in rows]
    times = [dt.datetime.fromtimestamp(ms / 1000, dt.timezone.utc) for _, ms in rows]
    return pa.table({"user": pa.array(users, pa.int64()), "ts": pa.array(times, pa.timestamp("us", tz="UTC")),
                     KEY_GROUP_COLUMN: pa.array([u * 7 % MAX_PARALLELISM for u in users], pa.int64())})


def operator(fn, schema="user BIGINT, n BIGINT", clock=None) -> KeyedProcessOperator:
    params = {"keys": ["user"], "schema": schema, "ts_column": "ts"}
    return KeyedProcessOperator(params, fn, clock) if clock else KeyedProcessOperator(params, fn)


def rows(table) -> list[tuple]:
    return [] if table is None else [tuple(r.values()) for r in table.to_pylist()]


class Counter(KeyedProcessFunction):
    """Running count per key, and every row's event time in a list; one timer per row at ts + 1 s."""

    def open(self, ctx):
        self.count = ctx.get_state(ValueStateDescriptor("count", 0))
        self.seen = ctx.get_list_state(ListStateDescriptor("seen"))

    def process_element(self, row, ctx, out):
        self.count.update(self.count.value() + 1)
        self.seen.add(ctx.timestamp())
        ctx.timer_service().register_event_time_timer(ctx.timestamp() + 1000)
        out.collect({"user": row["user"], "n": self.count.value()})

    def on_timer(self, timestamp, ctx, out):
        out.collect((ctx.get_current_key(), -timestamp))


def test_state_is_per_key_and_rows_of_a_key_keep_their_order():
    op = operator(Counter())
    out = op.process(bundle((1, T0), (2, T0), (1, T0 + 5), (3, T0), (1, T0 + 9)))
    assert rows(out) == [(1, 1), (1, 2), (1, 3), (2, 1), (3, 1)]
    assert rows(op.process(bundle((2, T0 + 1), (1, T0 + 20)))) == [(2, 2), (1, 4)]
    op.backend.set_current_key(1 * 7, 1)
    assert op.fn.seen.get() == [T0, T0 + 5, T0 + 9, T0 + 20]


def test_event_time_timers_fire_in_timestamp_order_once_the_watermark_reaches_them():
    op = operator(Counter())
    op.process(bundle((1, T0 + 500), (2, T0), (3, T0 + 200), (2, T0)))  # user 2 registers T0 + 1000 twice: one timer
    assert op.on_watermark((T0 + 999) * 1000) is None
    assert rows(op.on_watermark((T0 + 1200) * 1000 + 999)) == [(2, -(T0 + 1000)), (3, -(T0 + 1200))]
    assert op.ctx.timer_service().current_watermark() == T0 + 1200
    assert op.on_watermark((T0 + 1100) * 1000) is None, "watermarks never go back"
    assert rows(op.on_watermark(END_OF_TIME)) == [(1, -(T0 + 1500))]
    assert op.state_rows == 3 * 2, "a count and a list of times for each of three keys; no timers left"


class Chained(KeyedProcessFunction):
    """A timer that sets the next one until three fired; deleting the other timer it registered first."""

    def process_element(self, row, ctx, out):
        timers = ctx.timer_service()
        timers.register_event_time_timer(ctx.timestamp() + 10)
        timers.register_event_time_timer(ctx.timestamp() + 5)
        timers.delete_event_time_timer(ctx.timestamp() + 5)

    def on_timer(self, timestamp, ctx, out):
        assert ctx.time_domain() == EVENT_TIME and ctx.timestamp() == timestamp
        out.collect((ctx.get_current_key(), timestamp))
        if timestamp < T0 + 30:
            ctx.timer_service().register_event_time_timer(timestamp + 10)


def test_timers_set_while_firing_fire_in_the_same_watermark_when_due_and_deleted_ones_never():
    op = operator(Chained())
    op.process(bundle((4, T0)))
    assert rows(op.on_watermark((T0 + 25) * 1000)) == [(4, T0 + 10), (4, T0 + 20)]
    assert rows(op.on_watermark((T0 + 100) * 1000)) == [(4, T0 + 30)]


class Reminder(KeyedProcessFunction):
    """A processing-time timer 100 ms after each row; the timer reports the time it was due."""

    def process_element(self, row, ctx, out):
        now = ctx.timer_service().current_processing_time()
        ctx.timer_service().register_processing_time_timer(now + 100 * row["user"])

    def on_timer(self, timestamp, ctx, out):
        assert ctx.time_domain() == PROCESSING_TIME
        out.collect((ctx.get_current_key(), timestamp))


def test_processing_time_timers_fire_by_the_clock_not_by_watermarks():
    now = [5_000]
    op = operator(Reminder(), clock=lambda: now[0])
    assert op.processing_timer_delay() is None
    op.process(bundle((1, T0), (3, T0)))
    assert op.processing_timer_delay() == pytest.approx(0.1)
    assert op.on_watermark(END_OF_TIME) is None
    now[0] = 5_150
    assert op.processing_timer_delay() == pytest.approx(-0.05)
    assert rows(op.on_processing_time()) == [(1, 5_100)]
    assert op.processing_timer_delay() == pytest.approx(0.15)
    now[0] = 6_000
    assert rows(op.on_processing_time()) == [(3, 5_300)]
    assert op.processing_timer_delay() is None


class Everything(KeyedProcessFunction):
    """Value, list and map state plus both kinds of timers, to check what a snapshot carries."""

    def process_element(self, row, ctx, out):
        total = ctx.get_state(ValueStateDescriptor("total", 0))
        total.update(total.value() + row["user"])
        ctx.get_list_state(ListStateDescriptor("times")).add(ctx.timestamp())
        ctx.get_map_state(MapStateDescriptor("by_second")).put(ctx.timestamp() // 1000, row["user"])
        ctx.timer_service().register_event_time_timer(T0 + 5_000)  # the same for both rows: one timer
        ctx.timer_service().register_processing_time_timer(10**15)

    def on_timer(self, timestamp, ctx, out):
        if ctx.time_domain() == EVENT_TIME:
            seconds = sorted(ctx.get_map_state(MapStateDescriptor("by_second")).keys())
            times = ctx.get_list_state(ListStateDescriptor("times")).get()
            out.collect((ctx.get_current_key(), ctx.get_state(ValueStateDescriptor("total", 0)).value(),
                         len(times), len(seconds)))


def test_a_snapshot_splits_by_key_group_on_restore_at_another_parallelism():
    schema = "user BIGINT, total BIGINT, times BIGINT, seconds BIGINT"
    users = list(range(40))
    old = operator(Everything(), schema)
    old.process(bundle(*[(u, T0 + u) for u in users] + [(u, T0 + 1000 + u) for u in users]))
    snapshot = old.snapshot()
    assert {KEY_GROUP_COLUMN, "key", "name", "value"} <= set(snapshot.column_names)

    fired = []
    for index in range(3):
        groups = KeyGroupRange.for_operator(MAX_PARALLELISM, 3, index)
        new = operator(Everything(), schema)
        new.restore([snapshot.slice(0, 100), snapshot.slice(100)], range(groups.start, groups.end + 1))
        mine = [u for u in users if u * 7 % MAX_PARALLELISM in groups]
        assert new.state_rows == 5 * len(mine), "per key: three states, an event-time and a processing-time timer"
        assert new.processing_timer_delay() is not None or not mine
        out = rows(new.on_watermark(END_OF_TIME))
        assert sorted(r[0] for r in out) == mine
        fired += out
    assert sorted(fired) == [(u, 2 * u, 2, 2) for u in users]


class BadRow(KeyedProcessFunction):
    def __init__(self, row):
        self.row = row

    def process_element(self, row, ctx, out):
        out.collect(self.row)


@pytest.mark.parametrize("emitted,message", [
    ({"user": 1, "m": 2}, "has no column 'm'"),
    ({"user": 1}, "lacks column 'n'"),
    ((1, 2, 3), "has 3 values; the schema \\(user int64, n int64\\) has 2 columns"),
    ({"user": 1, "n": "many"}, "column 'n' \\(int64\\) cannot hold 'many' \\(str\\)"),
    ([1, None], "column 'n' is NOT NULL"),
    ("user=1", "takes a dict or a tuple"),
])
def test_rows_that_do_not_fit_the_schema_are_refused_naming_the_column(emitted, message):
    op = operator(BadRow(emitted), "user BIGINT, n BIGINT NOT NULL")
    with pytest.raises(OutputRowError, match=message):
        op.process(bundle((1, T0)))


def process_chain(fn, schema="user BIGINT, n BIGINT") -> OperatorChain:
    spec = OperatorSpec("p", "KeyedProcess(Test)", "keyed_process",
                        params={"keys": ["user"], "schema": schema, "ts_column": "ts"}, udf=pack_udf(fn))
    return OperatorChain.build([spec], [], MAX_PARALLELISM)


class Raises(KeyedProcessFunction):
    def process_element(self, row, ctx, out):
        raise ZeroDivisionError(f"no rows for user {row['user']}, please")


def test_failures_inside_the_chain_name_the_operator_and_keep_the_users_traceback():
    with pytest.raises(OperatorError, match="operator 'KeyedProcess\\(Test\\)': user function Raises.process_element "
                                            "raised:(.|\n)*ZeroDivisionError: no rows for user 1, please"):
        process_chain(Raises()).process(None, bundle((1, T0)))
    with pytest.raises(OperatorError, match="operator 'KeyedProcess\\(Test\\)': emitted row .* has no column 'm'"):
        process_chain(BadRow({"m": 1})).process(None, bundle((1, T0)))
    with pytest.raises(OperatorError, match="operator 'KeyedProcess\\(Test\\)': input has no column \\['ts'\\]"):
        process_chain(Counter()).process(None, bundle((1, T0)).drop_columns(["ts"]))


class StateInOpen(KeyedProcessFunction):
    def open(self, ctx):
        ctx.get_state(ValueStateDescriptor("v")).value()


def test_state_read_outside_a_key_is_an_error_that_says_where_state_can_be_used():
    with pytest.raises(OperatorError, match="use them in process_element or on_timer"):
        process_chain(StateInOpen()).process(None, bundle((1, T0)))


class DueNow(KeyedProcessFunction):
    def process_element(self, row, ctx, out):
        ctx.timer_service().register_processing_time_timer(ctx.timer_service().current_processing_time() - 1)

    def on_timer(self, timestamp, ctx, out):
        out.collect((ctx.get_current_key(), 0))


def test_the_chain_reports_when_its_next_processing_time_timer_is_due_and_fires_it():
    chain = process_chain(DueNow())
    assert chain.processing_timer_delay() is None
    assert chain.process(None, bundle((7, T0))) is None
    assert chain.processing_timer_delay() <= 0
    assert [rows(t) for t in chain.on_processing_time(None)] == [[(7, 0)]]
    assert chain.processing_timer_delay() is None and chain.on_processing_time(None) == []
