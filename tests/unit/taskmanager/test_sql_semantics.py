"""SQL operators' Flink semantics alone: typed aggregate results, semi and anti joins (NOT IN null-aware), RANK and
DENSE_RANK with rank ranges, LAG and FIRST/LAST_VALUE over a frame, and the temporal sort."""
import decimal

import pyarrow as pa

from runtime.taskmanager.group_aggregate import GroupAggregateOperator
from runtime.taskmanager.join_operator import JoinOperator
from runtime.taskmanager.over_operator import OverOperator
from runtime.taskmanager.rank_operator import RankOperator
from runtime.taskmanager.sort_operator import SortOperator
from runtime.taskmanager.sql_values import finish_average, finish_sum, wrap
from runtime.taskmanager.window_operator import END_OF_TIME
from tests.unit.taskmanager.test_sql_operators import bundle, changes, us


def test_integer_results_wrap_and_truncate_as_java_and_decimals_round_half_up():
    assert wrap(2**31, "INT") == -2**31 and wrap(-129, "TINYINT") == 127 and wrap(2**40, "DOUBLE") == 2**40
    assert finish_sum(2**31 + 5, "INT") == -2**31 + 5 and finish_sum(decimal.Decimal("1.50"), "DECIMAL(38,2)") == \
        decimal.Decimal("1.50")
    assert finish_average(-7, 2, "INT") == -3 and finish_average(7, 2, "BIGINT") == 3
    assert str(finish_average(decimal.Decimal("10.005"), 2, "DECIMAL(38,6)")) == "5.002500"
    assert str(finish_average(decimal.Decimal("0.0000005"), 1, "DECIMAL(38,6)")) == "0.000001"
    assert finish_average(1, 4, "DOUBLE") == 0.25


def test_a_group_sum_of_int_stays_int_and_wraps():
    op = GroupAggregateOperator({"keys": ["k"], "aggregates": [
        {"name": "s", "fn": "sum", "column": "v", "integral": True, "type": "INT"},
        {"name": "a", "fn": "avg", "column": "v", "integral": True, "type": "INT"}], "agg_schema": "s INT, a INT"})
    out = op.process(bundle([{"k": "x", "v": 2**31 - 1}, {"k": "x", "v": 2}]))
    assert changes(out) == [("+I", ("x", -2**31 + 1, 2**30))]
    assert out.schema.field("s").type == pa.int32()


def join(kind, null_aware=None):
    return JoinOperator({"kind": kind, "left_fields": ["lk", "lv"], "right_fields": ["rk", "rv"],
                         "left_keys": ["lk"], "right_keys": ["rk"], "null_aware": null_aware})


def side(rows, which, ops=None):
    table = bundle(rows, ops, kg=[0] * len(rows))
    return table.append_column("__side", pa.array([which] * len(rows), pa.int8()))


def test_a_semi_join_emits_a_left_row_once_it_has_a_partner_and_takes_it_back_when_none_is_left():
    op = join("semi")
    assert op.process(side([{"lk": 1, "lv": "a"}, {"lk": 2, "lv": "b"}], 0)) is None
    assert changes(op.process(side([{"rk": 1, "rv": "x"}, {"rk": 1, "rv": "y"}], 1))) == [("+I", (1, "a"))]
    assert op.process(side([{"rk": 1, "rv": "x"}], 1, [3])) is None, "one partner is left"
    assert changes(op.process(side([{"rk": 1, "rv": "y"}], 1, [3]))) == [("-D", (1, "a"))]


def test_an_anti_join_keeps_rows_without_partners_and_a_null_key_left_row():
    op = join("anti")
    first = changes(op.process(side([{"lk": 1, "lv": "a"}, {"lk": None, "lv": "n"}], 0)))
    assert sorted(first, key=repr) == [("+I", (1, "a")), ("+I", (None, "n"))]
    assert changes(op.process(side([{"rk": 1, "rv": "x"}], 1))) == [("-D", (1, "a"))]


def test_not_in_is_null_aware():
    op = JoinOperator({"kind": "anti", "left_fields": ["g", "lv"], "right_fields": ["g2", "rv"],
                       "left_keys": ["g"], "right_keys": ["g2"], "null_aware": ["lv", "rv"]})
    rows = [{"g": 0, "lv": 1}, {"g": 0, "lv": 2}, {"g": 0, "lv": None}]
    assert sorted(changes(op.process(side(rows, 0))), key=repr) == [("+I", (0, 1)), ("+I", (0, 2)), ("+I", (0, None))], \
        "x NOT IN (empty) is true, even for NULL"
    assert sorted(changes(op.process(side([{"g2": 0, "rv": 1}], 1))), key=repr) == [("-D", (0, 1)), ("-D", (0, None))]
    assert changes(op.process(side([{"g2": 0, "rv": None}], 1))) == [("-D", (0, 2))], "NULL in the subquery: none"


def ranked(function, start, limit, number="r"):
    return RankOperator({"partition": ["k"], "order": [["v", False, False]], "limit": limit, "start": start,
                         "number": number, "function": function, "fields": ["k", "v"]})


def test_rank_and_dense_rank_share_ranks_among_ties_and_keep_a_range():
    rows = [{"k": "a", "v": v} for v in (9, 7, 9, 5, 7, 3)]
    assert sorted(changes(ranked("rank", 1, 3).process(bundle(rows)))) == \
        [("+I", ("a", 7, 3)), ("+I", ("a", 7, 3)), ("+I", ("a", 9, 1)), ("+I", ("a", 9, 1))]
    assert sorted(changes(ranked("dense_rank", 2, 3).process(bundle(rows)))) == \
        [("+I", ("a", 5, 3)), ("+I", ("a", 7, 2)), ("+I", ("a", 7, 2))]
    assert sorted(changes(ranked("row_number", 2, 3).process(bundle(rows)))) == [("+I", ("a", 7, 3)), ("+I", ("a", 9, 2))]


def over(fn, args=(), frame=None):
    return OverOperator({"partition": ["k"], "time_column": "ts", "frame": frame or {"range_us": None},
                         "aggregates": [{"name": "o", "fn": fn, "column": "v", "type": "BIGINT", "args": list(args)}],
                         "agg_schema": "o BIGINT"})


def over_rows(values):
    from tests.unit.taskmanager.test_sql_operators import at

    return bundle([{"k": "a", "v": v, "ts": at(i)} for i, v in enumerate(values)], kg=[0] * len(values))


def test_lag_and_first_and_last_value_read_the_frame():
    values = [10, None, 30, 40]
    results = {}
    for name, op in {"lag": over("lag", (1, None)), "lag2": over("lag", (2, -1)), "first": over("first_value"),
                     "last": over("last_value"), "last2": over("last_value", frame={"rows": 1})}.items():
        op.process(over_rows(values))
        results[name] = [r["o"] for r in op.on_watermark(us(10)).to_pylist()]
    assert results["lag"] == [None, 10, None, 30] and results["lag2"] == [-1, -1, 10, None]
    assert results["first"] == [10, 10, 10, 10] and results["last"] == [10, 10, 30, 40]
    assert results["last2"] == [10, 10, 30, 40]


def test_the_temporal_sort_emits_rows_in_time_order_as_the_watermark_passes():
    from tests.unit.taskmanager.test_sql_operators import at

    op = SortOperator({"fields": ["id", "ts"], "time_column": "ts", "order": [["ts", True, True]]})
    op.process(bundle([{"id": 3, "ts": at(3)}, {"id": 1, "ts": at(1)}, {"id": 2, "ts": at(2)}], kg=[0, 0, 0]))
    assert [r["id"] for r in op.on_watermark(us(2)).to_pylist()] == [1, 2]
    assert op.process(bundle([{"id": 0, "ts": at(0)}], kg=[0])) is None and op.late_records == 1
    assert [r["id"] for r in op.on_watermark(END_OF_TIME).to_pylist()] == [3]
