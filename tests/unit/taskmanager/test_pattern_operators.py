"""The MATCH_RECOGNIZE and temporal join operators alone, as Flink's harness tests do: bundles and watermarks
in, rows out, snapshots restored into fresh operators (also split by key group, as at another parallelism)."""
import datetime

import pyarrow as pa

from runtime.keygroups import KEY_GROUP_COLUMN
from runtime.taskmanager.match_operator import MatchOperator
from runtime.taskmanager.temporal_join_operator import TemporalJoinOperator

T0 = datetime.datetime(2024, 1, 1)
KEY_GROUPS = {"a": 3, "b": 90}


def at(seconds):
    return T0 + datetime.timedelta(seconds=seconds)


def us(seconds):
    return int((at(seconds) - datetime.datetime(1970, 1, 1)).total_seconds() * 1_000_000)


def ticks(*rows):
    """(key, second, price) rows as a bundle, each key in its own key group."""
    table = pa.Table.from_pylist([{"k": k, "ts": at(s), "price": p} for k, s, p in rows],
                                 schema=pa.schema([("k", pa.string()), ("ts", pa.timestamp("us")), ("price", pa.int64())]))
    return table.append_column(KEY_GROUP_COLUMN, pa.array([KEY_GROUPS[k] for k, _, _ in rows], pa.int64()))


def rising(order=()):
    """A B with B > A: each rise of the price; measures A's price, B's price and B's time."""
    nav = lambda v, c: ["nav", v, "last", 0, ["col", c]]  # noqa: E731
    return MatchOperator({
        "partition": ["k"], "time_column": "ts", "order": list(order), "fields": ["k", "ts", "price"],
        "pattern": {"variables": [{"name": "A", "min": 1, "max": 1, "greedy": True},
                                  {"name": "B", "min": 1, "max": 1, "greedy": True}],
                    "define": {"B": ["fn", "gt", nav("B", "price"), nav("A", "price")]}, "skip": ["past_last"]},
        "atoms": [{"name": "a", "ir": nav("A", "price"), "type": "BIGINT", "column": "price"},
                  {"name": "b", "ir": nav("B", "price"), "type": "BIGINT", "column": "price"},
                  {"name": "t", "ir": nav("B", "ts"), "type": "TIMESTAMP", "column": "ts"}],
        "schema": "k STRING, a BIGINT, b BIGINT, t TIMESTAMP"})


def rows_of(table):
    return sorted((r["k"], r["a"], r["b"]) for r in table.to_pylist()) if table is not None else []


def test_rows_wait_for_the_watermark_then_match_in_time_order_and_late_rows_are_dropped():
    op = rising()
    assert op.process(ticks(("a", 2, 5), ("a", 1, 3), ("b", 1, 9))) is None, "nothing before the watermark"
    assert rows_of(op.on_watermark(us(1))) == [], "only the row at 1 s is due: no pair yet"
    out = op.on_watermark(us(2))
    assert rows_of(out) == [("a", 3, 5)] and out.column("t").to_pylist() == [at(2)]
    assert out.schema.field("t").type == pa.timestamp("us"), "copied columns keep the input's Arrow type"
    op.process(ticks(("b", 2, 1), ("a", 3, 9)))
    assert op.late_records == 1, "b at 2 s came after the watermark passed 2 s"
    assert rows_of(op.on_watermark(us(10))) == []


def test_rows_of_one_time_follow_the_order_by_after_the_time_attribute():
    op = rising(order=[["price", False, False]])
    op.process(ticks(("a", 1, 4), ("a", 1, 8)))
    op.process(ticks(("a", 2, 6)))
    assert rows_of(op.on_watermark(us(5))) == [("a", 4, 6)], "8 then 4 at 1 s (price DESC): the rise is 4 -> 6"


def test_partial_matches_and_buffered_rows_survive_a_snapshot_split_by_key_group():
    op = rising()
    op.process(ticks(("a", 1, 3), ("b", 1, 7), ("a", 3, 1)))
    op.on_watermark(us(1))
    snapshot = op.snapshot()
    low, high = rising(), rising()
    low.restore([snapshot], range(0, 64))
    high.restore([snapshot], range(64, 128))
    low.process(ticks(("a", 2, 4)))
    high.process(ticks(("b", 2, 8)))
    assert rows_of(low.on_watermark(us(9))) == [("a", 3, 4)]
    assert rows_of(high.on_watermark(us(9))) == [("b", 7, 8)]
    assert low.state_rows == 1 and high.state_rows == 0, "a keeps its partial match from 1 s (3 s: A=1), b nothing"


TEMPORAL = {"kind": "inner", "left_fields": ["id", "cur", "ot"], "right_fields": ["rcur", "rate", "ut"],
            "left_keys": ["cur"], "right_keys": ["rcur"], "left_time": "ot", "right_time": "ut"}


def sides(left=(), right=()):
    rows = [{"__side": 0, "id": i, "cur": c, "ot": at(s), "rcur": None, "rate": None, "ut": None} for i, c, s in left]
    rows += [{"__side": 1, "id": None, "cur": None, "ot": None, "rcur": c, "rate": r, "ut": at(s)} for c, r, s in right]
    schema = pa.schema([("__side", pa.int8()), ("id", pa.int64()), ("cur", pa.string()), ("ot", pa.timestamp("us")),
                        ("rcur", pa.string()), ("rate", pa.float64()), ("ut", pa.timestamp("us"))])
    table = pa.Table.from_pylist(rows, schema=schema)
    return table.append_column(KEY_GROUP_COLUMN, pa.array([7] * len(rows), pa.int64()))


def joined(table):
    return sorted((r[0], r[4]) for r in (tuple(x.values()) for x in table.to_pylist())) if table is not None else []


def test_a_temporal_join_gives_each_row_the_version_valid_at_its_time_once_the_watermark_passes_it():
    op = TemporalJoinOperator({**TEMPORAL, "kind": "left"})
    op.process(sides(right=[("EUR", 1.1, 0), ("EUR", 1.2, 5), ("EUR", 1.3, 9)]))
    op.process(sides(left=[(1, "EUR", 4), (2, "EUR", 5), (3, "EUR", 12), (4, "USD", 6)]))
    assert joined(op.on_watermark(us(5))) == [(1, 1.1), (2, 1.2)]
    assert joined(op.on_watermark(us(20))) == [(3, 1.3), (4, None)], "USD has no version: padded in a LEFT join"
    assert len(op.backend.values) == 2 and op.snapshot().num_rows == 2, "EUR keeps only its latest version"


def test_versions_of_one_time_replace_each_other_and_a_dedup_view_ignores_older_rows():
    plain, dedup = TemporalJoinOperator(TEMPORAL), TemporalJoinOperator({**TEMPORAL, "keep_last": True})
    for op in (plain, dedup):
        op.process(sides(right=[("EUR", 1.1, 0), ("EUR", 1.2, 0), ("EUR", 2.0, 3), ("EUR", 1.9, 1)]))
        op.process(sides(left=[(1, "EUR", 0), (2, "EUR", 2)]))
    assert joined(plain.on_watermark(us(9))) == [(1, 1.2), (2, 1.9)]
    assert joined(dedup.on_watermark(us(9))) == [(1, 1.2), (2, 1.2)], "1.9 at 1 s came after 2.0 at 3 s: no version"


def test_temporal_join_state_is_restored_by_key_group():
    op = TemporalJoinOperator(TEMPORAL)
    op.process(sides(right=[("EUR", 1.1, 0)], left=[(1, "EUR", 3)]))
    restored, other = TemporalJoinOperator(TEMPORAL), TemporalJoinOperator(TEMPORAL)
    restored.restore([op.snapshot()], range(0, 64))
    other.restore([op.snapshot()], range(64, 128))
    assert joined(restored.on_watermark(us(5))) == [(1, 1.1)] and other.on_watermark(us(5)) is None
