"""SQL's stateful operators alone, as Flink's harness tests do: push bundles and watermarks, snapshot,
restore (also at another parallelism's key groups) and read what comes out, with no cluster."""
import datetime
from types import SimpleNamespace

import pyarrow as pa

from runtime.keygroups import KEY_GROUP_COLUMN
from runtime.taskmanager import changelog
from runtime.taskmanager.chain import OperatorChain, StatefulStage
from runtime.taskmanager.group_aggregate import GroupAggregateOperator
from runtime.taskmanager.join_operator import JoinOperator
from runtime.taskmanager.over_operator import OverOperator
from runtime.taskmanager.rank_operator import RankOperator
from runtime.taskmanager.time_join_operator import IntervalJoinOperator, WindowJoinOperator
from runtime.taskmanager.window_operator import BEFORE_TIME, END_OF_TIME

T0 = datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc)


def bundle(rows, ops=None, kg=None):
    table = pa.Table.from_pylist(rows)
    groups = kg or [hash(str(r.get("k", r.get("lk", r.get("rk"))))) % 4 for r in rows]
    table = table.append_column(KEY_GROUP_COLUMN, pa.array(groups, pa.int64()))
    if ops is not None:
        table = table.append_column(changelog.OP_COLUMN, pa.array(ops, pa.int8()))
    return table


def changes(table):
    if table is None:
        return []
    names = [n for n in table.column_names if n != changelog.OP_COLUMN]
    ops = changelog.ops_of(table)
    return [(changelog.SHORT[o], tuple(r[n] for n in names)) for o, r in zip(ops, table.to_pylist())]


def at(seconds):
    return T0 + datetime.timedelta(seconds=seconds)


def us(seconds):
    return int(at(seconds).timestamp() * 1_000_000)


GROUP = {"keys": ["k"], "aggregates": [{"name": "n", "fn": "count", "column": None},
                                       {"name": "s", "fn": "sum", "column": "v", "integral": True},
                                       {"name": "m", "fn": "max", "column": "v"}],
         "agg_schema": "n BIGINT, s BIGINT, m BIGINT"}


def test_group_aggregate_emits_insert_then_update_pairs_and_delete_on_retraction():
    op = GroupAggregateOperator(GROUP)
    first = changes(op.process(bundle([{"k": "a", "v": 1}, {"k": "a", "v": 5}, {"k": "b", "v": 2}])))
    assert first == [("+I", ("a", 2, 6, 5)), ("+I", ("b", 1, 2, 2))]
    assert op.process(bundle([{"k": "b", "v": 2}, {"k": "b", "v": 9}], [0, 0])) is not None
    retract = changes(op.process(bundle([{"k": "a", "v": 5}, {"k": "a", "v": 1}], [3, 3])))
    assert retract == [("-D", ("a", 2, 6, 5))]
    unchanged = op.process(bundle([{"k": "b", "v": 1}, {"k": "b", "v": 1}], [0, 3]))
    assert unchanged is None, "no update when the result did not change"


def test_group_aggregate_state_survives_a_snapshot_split_by_key_group():
    op = GroupAggregateOperator(GROUP)
    op.process(bundle([{"k": "a", "v": 1}, {"k": "b", "v": 2}], kg=[1, 70]))
    snapshot = op.snapshot()
    low, high = GroupAggregateOperator(GROUP), GroupAggregateOperator(GROUP)
    low.restore([snapshot], range(0, 64))
    high.restore([snapshot], range(64, 128))
    assert changes(low.process(bundle([{"k": "a", "v": 3}], kg=[1]))) == [("-U", ("a", 1, 1, 1)), ("+U", ("a", 2, 4, 3))]
    assert changes(high.process(bundle([{"k": "b", "v": 3}], kg=[70])))[1] == ("+U", ("b", 2, 5, 3))


def test_a_changelog_of_group_aggregate_applies_to_the_final_table_in_batch_mode_too():
    streaming, batch = GroupAggregateOperator(GROUP), GroupAggregateOperator({**GROUP, "emit_final": True})
    out = []
    for rows in ([{"k": "a", "v": 1}], [{"k": "a", "v": 2}, {"k": "b", "v": 7}], [{"k": "a", "v": 4}]):
        out += changes(streaming.process(bundle(rows)))
        assert batch.process(bundle(rows)) is None
    final = changelog.apply([(dict((v, k) for k, v in changelog.SHORT.items())[o], r) for o, r in out])
    assert sorted(final) == sorted(r for _, r in changes(batch.on_watermark(END_OF_TIME)))


def test_top_n_with_row_numbers_updates_positions():
    op = RankOperator({"partition": ["k"], "order": [["v", False]], "limit": 2, "number": "rn"})
    assert changes(op.process(bundle([{"k": "a", "v": 1}]))) == [("+I", ("a", 1, 1))]
    assert changes(op.process(bundle([{"k": "a", "v": 5}]))) == [("-U", ("a", 1, 1)), ("+U", ("a", 5, 1)),
                                                                  ("+I", ("a", 1, 2))]
    assert changes(op.process(bundle([{"k": "a", "v": 0}]))) == [], "below the top 2: nothing changes"


def test_deduplication_keeps_the_first_row_and_top_n_without_numbers_swaps_rows():
    first = RankOperator({"partition": ["k"], "order": [["t", True]], "limit": 1})
    assert changes(first.process(bundle([{"k": "a", "t": 2}, {"k": "a", "t": 3}]))) == [("+I", ("a", 2))]
    assert changes(first.process(bundle([{"k": "a", "t": 1}]))) == [("-D", ("a", 2)), ("+I", ("a", 1))]


def test_top_n_puts_nulls_first_ascending_and_last_descending_as_flink_does():
    rows = [{"k": "a", "v": None}, {"k": "a", "v": 5}, {"k": "a", "v": 7}]
    highest = RankOperator({"partition": ["k"], "order": [["v", False]], "limit": 2})
    assert [r[1] for _, r in changes(highest.process(bundle(rows)))] == [7, 5]
    lowest = RankOperator({"partition": ["k"], "order": [["v", True]], "limit": 2})
    assert [r[1] for _, r in changes(lowest.process(bundle(rows)))] == [None, 5]
    nulls_last = RankOperator({"partition": ["k"], "order": [["v", True, False]], "limit": 2})
    assert [r[1] for _, r in changes(nulls_last.process(bundle(rows)))] == [5, 7]


def test_top_n_of_the_whole_result_leaves_out_the_global_key_it_was_hashed_by():
    rows = [{"v": 3, "__global": 0}, {"v": 9, "__global": 0}, {"v": 5, "__global": 0}]
    op = RankOperator({"partition": [], "fields": ["v"], "order": [["v", False]], "limit": 2})
    assert changes(op.process(bundle(rows, kg=[0, 0, 0]))) == [("+I", (9,)), ("+I", (5,))]


def join_bundle(rows):
    table = bundle([{k: v for k, v in r.items()} for r in rows], kg=[0] * len(rows))
    return table


def test_left_join_pads_then_retracts_the_padded_row_when_a_partner_arrives():
    op = JoinOperator({"kind": "left", "left_fields": ["lk", "lv"], "right_fields": ["rk", "rv"],
                       "left_keys": ["lk"], "right_keys": ["rk"]})
    left = changes(op.process(join_bundle([{"__side": 0, "lk": 1, "lv": "x", "rk": None, "rv": None}])))
    assert left == [("+I", (1, "x", None, None))]
    right = changes(op.process(join_bundle([{"__side": 1, "lk": None, "lv": None, "rk": 1, "rv": "y"}])))
    assert right == [("-D", (1, "x", None, None)), ("+I", (1, "x", 1, "y"))]
    gone = changes(op.process(bundle([{"__side": 1, "lk": None, "lv": None, "rk": 1, "rv": "y"}], [3], kg=[0])))
    assert gone == [("-D", (1, "x", 1, "y")), ("+I", (1, "x", None, None))]


def test_interval_join_matches_within_bounds_and_forgets_what_the_watermark_passed():
    op = IntervalJoinOperator({"left_fields": ["lk", "lt"], "right_fields": ["rk", "rt"], "left_keys": ["lk"],
                               "right_keys": ["rk"], "left_time": "lt", "right_time": "rt",
                               "lower_us": -2_000_000, "upper_us": 0})
    op.process(join_bundle([{"__side": 1, "lk": None, "lt": None, "rk": 1, "rt": at(10)}]))
    out = changes(op.process(join_bundle([{"__side": 0, "lk": 1, "lt": at(9), "rk": None, "rt": None},
                                          {"__side": 0, "lk": 1, "lt": at(11), "rk": None, "rt": None}])))
    assert out == [("+I", (1, at(9), 1, at(10)))]
    op.on_watermark(us(20))
    assert op.state_rows == 0


def test_outer_interval_join_pads_what_matched_nothing_once_the_watermark_passes():
    op = IntervalJoinOperator({"kind": "full", "left_fields": ["lk", "lt"], "right_fields": ["rk", "rt"],
                               "left_keys": ["lk"], "right_keys": ["rk"], "left_time": "lt", "right_time": "rt",
                               "lower_us": -2_000_000, "upper_us": 0})
    null_key = changes(op.process(join_bundle([{"__side": 0, "lk": None, "lt": at(1), "rk": None, "rt": None}])))
    assert null_key == [("+I", (None, at(1), None, None))], "a NULL key matches nothing: padded at once"
    op.process(join_bundle([{"__side": 1, "lk": None, "lt": None, "rk": 1, "rt": at(10)},
                            {"__side": 1, "lk": None, "lt": None, "rk": 2, "rt": at(10)}]))
    out = changes(op.process(join_bundle([{"__side": 0, "lk": 1, "lt": at(9), "rk": None, "rt": None},
                                          {"__side": 0, "lk": 1, "lt": at(11), "rk": None, "rt": None}])))
    assert out == [("+I", (1, at(9), 1, at(10)))]
    assert op.on_watermark(us(9)) is None, "the right rows could still meet a left row at 10 or later"
    assert changes(op.on_watermark(us(12))) == [("+I", (None, None, 2, at(10)))], "the matched right row is not padded"
    assert changes(op.on_watermark(us(14))) == [("+I", (1, at(11), None, None))], "a right row up to 13 could match"
    assert op.state_rows == 0


def test_window_join_emits_when_the_window_closes():
    op = WindowJoinOperator({"kind": "full", "left_fields": ["lk", "ws", "we"], "right_fields": ["rk", "rws", "rwe"],
                             "left_keys": ["lk"], "right_keys": ["rk"], "left_window": ["ws", "we"],
                             "right_window": ["rws", "rwe"]})
    op.process(join_bundle([{"__side": 0, "lk": 1, "ws": at(0), "we": at(5), "rk": None, "rws": None, "rwe": None},
                            {"__side": 1, "lk": None, "ws": None, "we": None, "rk": 2, "rws": at(0), "rwe": at(5)}]))
    assert op.on_watermark(us(4)) is None
    out = changes(op.on_watermark(us(5)))
    assert sorted(out, key=str) == sorted([("+I", (1, at(0), at(5), None, None, None)),
                                           ("+I", (None, None, None, 2, at(0), at(5)))], key=str)


def test_over_rows_frame_in_time_order_after_the_watermark():
    op = OverOperator({"partition": ["k"], "time_column": "t", "frame": {"rows": 1},
                       "aggregates": [{"name": "s", "fn": "sum", "column": "v", "integral": True}],
                       "agg_schema": "s BIGINT"})
    op.process(bundle([{"k": "a", "t": at(2), "v": 2}, {"k": "a", "t": at(1), "v": 1}, {"k": "a", "t": at(3), "v": 3}]))
    out = changes(op.on_watermark(us(2)))
    assert [r[-1] for _, r in out] == [1, 3]
    assert [r[-1] for _, r in changes(op.on_watermark(us(3)))] == [5]
    op.process(bundle([{"k": "a", "t": at(1), "v": 9}]))
    assert op.late_records == 1


def test_an_interval_join_holds_back_the_watermark_it_passes_on_by_its_bounds():
    """Its output rows can be up to the bounds older than its input watermark (a partner arriving late within
    them), so the chain passes on a watermark that much lower; the end of time stays the end."""
    params = {"left_fields": ["lk", "lt"], "right_fields": ["rk", "rt"], "left_keys": ["lk"], "right_keys": ["rk"],
              "left_time": "lt", "right_time": "rt"}
    left_late = IntervalJoinOperator({**params, "lower_us": -2_000_000, "upper_us": 0})
    right_late = IntervalJoinOperator({**params, "lower_us": -1_000_000, "upper_us": 3_000_000})
    assert (left_late.watermark_delay, right_late.watermark_delay) == (2_000_000, 3_000_000)
    chain = OperatorChain([StatefulStage(SimpleNamespace(name="first join"), left_late),
                           StatefulStage(SimpleNamespace(name="second join"), right_late)])
    assert list(chain.stage_watermarks(us(10)).values()) == [us(10), us(8)], "what follows a join sees it held back"
    assert chain.output_watermark(us(10)) == us(5)
    assert chain.output_watermark(END_OF_TIME) == END_OF_TIME
    assert chain.output_watermark(BEFORE_TIME) == BEFORE_TIME


def test_rows_an_interval_join_emits_are_never_behind_the_watermark_it_passed_on():
    """A payment on time (after the watermark) may match a click up to 2 s older than the watermark; the join's
    output carries the click's time, so only a held-back watermark keeps a window after the join from
    dropping that row as late."""
    op = IntervalJoinOperator({"left_fields": ["lk", "lt"], "right_fields": ["rk", "rt"], "left_keys": ["lk"],
                               "right_keys": ["rk"], "left_time": "lt", "right_time": "rt",
                               "lower_us": -2_000_000, "upper_us": 0})  # click time - payment time in [-2 s, 0]
    chain = OperatorChain([StatefulStage(SimpleNamespace(name="join"), op)])
    op.process(join_bundle([{"__side": 0, "lk": 1, "lt": at(9), "rk": None, "rt": None}]))
    op.on_watermark(us(10))
    passed_on = chain.output_watermark(us(10))
    out = changes(op.process(join_bundle([{"__side": 1, "lk": None, "lt": None, "rk": 1, "rt": at(10.5)}])))
    assert out == [("+I", (1, at(9), 1, at(10.5)))]
    assert us(9) >= passed_on, "the joined row is on time for what follows the join"
