"""SQL's Python functions without Spark or a cluster: the bodies Spark's Python workers run (scalar, table and
partial-accumulator functions over Arrow, runtime.taskmanager.spark_udfs) and the keyed operators that keep
Python accumulators as state (group aggregate, windows), snapshot and restore included."""
import cloudpickle
import pyarrow as pa
import pytest

from runtime.taskmanager.group_aggregate import GroupAggregateOperator
from runtime.taskmanager.spark_udfs import PythonFunctionError, failure_line, partial_accumulators, scalar, table
from runtime.taskmanager.window_operator import WINDOW_START, WindowOperator
from runtime.udf import AggregateFunction, udaf, udf, udtf
from tests.unit.taskmanager.test_sql_operators import bundle, changes


class Total(AggregateFunction):
    """A sum that merges and retracts, counting calls of each method (checks what ran where)."""

    def create_accumulator(self):
        return [0, 0]

    def accumulate(self, acc, value):
        if value is not None:
            acc[0] += value
            acc[1] += 1

    def retract(self, acc, value):
        if value is not None:
            acc[0] -= value
            acc[1] -= 1

    def merge(self, acc, others):
        for other in others:
            acc[0] += other[0]
            acc[1] += other[1]

    def get_value(self, acc):
        return acc[0] if acc[1] else None


class Concat(AggregateFunction):
    """Order-dependent and without merge: its rows travel raw."""

    def create_accumulator(self):
        return []

    def accumulate(self, acc, value):
        acc.append(value)

    def get_value(self, acc):
        return "".join(acc)


TOTAL = udaf(Total(), result_type="BIGINT")
CONCAT = udaf(Concat(), result_type="STRING")


def spec(name, args, type_, raw=False):
    return {"name": name, "fn": "udaf", "column": None, "args": args, "type": type_, "raw": raw}


def test_a_row_at_a_time_scalar_function_runs_over_arrow_arrays_with_nulls():
    @udf(result_type="STRING")
    def tag(n, s):
        return None if n is None else f"{s}{n}"

    out = scalar(tag, pa.string())(pa.array([1, None, 3]), pa.array(["a", "b", "c"]))
    assert out.to_pylist() == ["a1", None, "c3"]


def test_a_pandas_scalar_function_gets_series_and_nan_comes_back_as_null():
    twice = udf(lambda v: v * 2, result_type="DOUBLE", func_type="pandas")
    assert scalar(twice, pa.float64())(pa.array([1.5, None])).to_pylist() == [3.0, None]


def test_a_scalar_function_returning_the_wrong_type_is_named_with_the_value():
    bad = udf(lambda v: "x" if v == 2 else v, result_type="BIGINT", name="shaky")
    with pytest.raises(PythonFunctionError, match=r"function shaky returned 'x' \(str\) where its result type is BIGINT"):
        scalar(bad, pa.int64())(pa.array([1, 2]))


def test_an_exception_in_a_function_becomes_one_line_naming_it():
    boom = udf(lambda v: 1 // v, result_type="BIGINT", name="inverse")
    with pytest.raises(PythonFunctionError) as raised:
        scalar(boom, pa.int64())(pa.array([1, 0]))
    assert str(raised.value) == "function inverse raised ZeroDivisionError: integer division or modulo by zero"
    worker_text = f"Traceback (most recent call last):\n  File ...\nPythonFunctionError: {raised.value}\n"
    assert failure_line(worker_text) == str(raised.value)


def test_a_table_function_repeats_each_row_per_row_it_gives_and_outer_keeps_empty_ones():
    @udtf(result_types=["STRING", "INT"])
    def pieces(s):
        for i, p in enumerate(s.split("-")) if s else []:
            yield p, i

    batch = pa.RecordBatch.from_pydict({"id": [1, 2, 3], "__targ0": ["a-b", None, "c"]})
    schema = pa.schema([("id", pa.int64()), ("p", pa.string()), ("i", pa.int32())])
    inner = list(table(pieces, ["__targ0"], schema, 2, False, 1)([batch]))[0]
    assert inner.to_pylist() == [{"id": 1, "p": "a", "i": 0}, {"id": 1, "p": "b", "i": 1}, {"id": 3, "p": "c", "i": 0}]
    outer = list(table(pieces, ["__targ0"], schema, 2, True, 1)([batch]))[0]
    assert outer.column("id").to_pylist() == [1, 1, 2, 3] and outer.column("p").to_pylist()[2] is None


def test_a_table_function_row_of_the_wrong_width_is_named():
    wide = udtf(lambda s: [(s, 1, 2)], result_types=["STRING", "INT"], name="wide")
    batch = pa.RecordBatch.from_pydict({"__targ0": ["a"]})
    schema = pa.schema([("p", pa.string()), ("i", pa.int32())])
    with pytest.raises(PythonFunctionError, match="function wide gave a row of 3 values where its result type has 2"):
        list(table(wide, ["__targ0"], schema, 2, False, 0)([batch]))


def test_partial_accumulators_accumulate_each_group_in_arrival_order():
    groups = pa.array([[{"__ord": 2, "__a0": "b"}, {"__ord": 1, "__a0": "a"}], [{"__ord": 5, "__a0": "z"}]])
    pickled = partial_accumulators(CONCAT, ["__a0"])(groups).to_pylist()
    assert [cloudpickle.loads(p) for p in pickled] == [["a", "b"], ["z"]]


def test_group_by_merges_partial_accumulators_into_keyed_state_that_snapshots_and_restores():
    params = {"keys": ["k"], "aggregates": [spec("t", ["v"], "BIGINT")], "preaggregated": True,
              "agg_schema": "t BIGINT"}
    op = GroupAggregateOperator(params, {"t": TOTAL})
    partial = [cloudpickle.dumps([5, 2]), cloudpickle.dumps([7, 1])]
    first = op.process(bundle([{"k": "a", "__records": 2, "__p0": partial[0]},
                               {"k": "b", "__records": 1, "__p0": partial[1]}], kg=[3, 90]))
    assert changes(first) == [("+I", ("a", 5)), ("+I", ("b", 7))]
    restored = GroupAggregateOperator(params, {"t": TOTAL})
    restored.restore([op.snapshot()], range(0, 64))
    again = restored.process(bundle([{"k": "a", "__records": 1, "__p0": cloudpickle.dumps([10, 1])}], kg=[3]))
    assert changes(again) == [("-U", ("a", 5)), ("+U", ("a", 15))]


def test_group_by_over_an_updating_input_accumulates_and_retracts_rows():
    params = {"keys": ["k"], "aggregates": [spec("t", ["v"], "BIGINT", raw=True)], "agg_schema": "t BIGINT"}
    op = GroupAggregateOperator(params, {"t": TOTAL})
    op.process(bundle([{"k": "a", "v": 4}, {"k": "a", "v": 6}], ops=[0, 0]))
    assert changes(op.process(bundle([{"k": "a", "v": 4}], ops=[3]))) == [("-U", ("a", 10)), ("+U", ("a", 6))]
    assert changes(op.process(bundle([{"k": "a", "v": 6}], ops=[3]))) == [("-D", ("a", 6))]


def test_a_wrong_typed_aggregate_value_names_the_function():
    bad = udaf(Concat(), result_type="BIGINT", name="joined")
    params = {"keys": ["k"], "aggregates": [spec("j", ["v"], "BIGINT", raw=True)], "agg_schema": "j BIGINT"}
    op = GroupAggregateOperator(params, {"j": bad})
    with pytest.raises(PythonFunctionError, match=r"function joined returned 'x' \(str\) where its result type is BIGINT"):
        op.process(bundle([{"k": "a", "v": "x"}], ops=[0]))


TUMBLE = {"type": "tumble", "size_us": 10_000_000}


def window_rows(rows):
    return bundle([{**r, WINDOW_START: r.pop("w") * 10_000_000} for r in rows])


def test_window_state_folds_partial_accumulators_by_merge_and_fires_their_value():
    params = {"keys": ["k"], "window": TUMBLE, "aggregates": [spec("t", ["v"], "BIGINT")]}
    op = WindowOperator(params, {"t": TOTAL})
    for p in ([3, 1], [4, 2]):
        op.process(window_rows([{"k": "a", "w": 0, "__records": p[1], "__p_t": cloudpickle.dumps(p)}]))
    restored = WindowOperator(params, {"t": TOTAL})
    restored.restore([op.snapshot()], range(0, 128))
    fired = restored.on_watermark(10_000_000)
    assert fired.select(["k", "t"]).to_pylist() == [{"k": "a", "t": 7}]


def test_a_window_whose_function_cannot_merge_gets_its_rows_in_arrival_order_when_it_fires():
    params = {"keys": ["k"], "window": TUMBLE, "aggregates": [spec("c", ["v"], "STRING", raw=True)]}
    op = WindowOperator(params, {"c": CONCAT})
    op.process(bundle([{"k": "a", "v": "x", WINDOW_START: 0, "__ts": 1}, {"k": "a", "v": "y", WINDOW_START: 0,
                                                                          "__ts": 2}]))
    op.process(bundle([{"k": "a", "v": "z", WINDOW_START: 0, "__ts": 3}]))
    assert op.on_watermark(10_000_000).select(["k", "c"]).to_pylist() == [{"k": "a", "c": "xyz"}]


def test_a_pandas_aggregate_function_gets_each_windows_values_as_series():
    spread = udaf(lambda v, w: float((v * w).sum()), result_type="DOUBLE", func_type="pandas", name="spread")
    params = {"keys": ["k"], "window": TUMBLE, "aggregates": [spec("s", ["v", "w"], "DOUBLE", raw=True)]}
    op = WindowOperator(params, {"s": spread})
    op.process(bundle([{"k": "a", "v": 1.0, "w": 2.0, WINDOW_START: 0, "__ts": 1},
                       {"k": "a", "v": 3.0, "w": 1.0, WINDOW_START: 10_000_000, "__ts": 10_000_001},
                       {"k": "a", "v": 2.0, "w": 5.0, WINDOW_START: 0, "__ts": 2}]))
    assert op.on_watermark(20_000_000).select(["s"]).to_pylist() == [{"s": 12.0}, {"s": 3.0}]
