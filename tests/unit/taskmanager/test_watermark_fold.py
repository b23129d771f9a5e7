"""Which Spark stages carry the watermark's event time on their window pre-aggregate
(runtime.taskmanager.chain.fold_watermark), and what the folded operators are asked to do."""
from __future__ import annotations

import pytest

from runtime.jobgraph import OperatorSpec
from runtime.taskmanager.chain import EVENT_MICROS, KEEP, fold_watermark

TUMBLING = {"type": "tumbling", "size_us": 10_000_000, "slide_us": 10_000_000}
COMBINE = {"keys": ["user"], "window": TUMBLING, "ts_column": "ts",
           "aggregates": [{"name": "clicks", "fn": "count"}, {"name": "total", "fn": "sum", "column": "amount"}]}


def op(kind: str, udf: str | None = None, **params) -> OperatorSpec:
    return OperatorSpec(f"{kind}-id", kind.title(), kind, 1, params, udf)


def watermark() -> OperatorSpec:
    return op("watermark", ts_column="ts", lag_us=1_000_000)


def combine(**changes) -> OperatorSpec:
    return op("window_combine", **{**COMBINE, **changes})


def test_the_clicks_stage_filters_into_a_flag_and_its_pre_aggregate_takes_the_largest_event_time():
    folded = fold_watermark([watermark(), op("filter", condition="amount > 0.1"), combine()])
    assert [o.kind for o in folded] == ["watermark", "filter", "window_combine"]
    hidden = {"event_column": EVENT_MICROS, "keep_column": KEEP}
    assert folded[0].params == {"ts_column": "ts", "lag_us": 1_000_000, **hidden}
    assert folded[1].params == {"condition": "amount > 0.1", "into": KEEP}
    assert folded[2].params == {**COMBINE, **hidden}


def test_a_selection_of_columns_by_name_carries_the_hidden_columns_through():
    select = op("select", exprs=["`user`", "amount", " `ts` "])
    folded = fold_watermark([op("source"), watermark(), op("filter", condition="amount > 0.1"), select, combine()])
    assert folded[0] == op("source")
    assert folded[3].params["exprs"] == ["`user`", "amount", " `ts` ", EVENT_MICROS, KEEP]


def test_without_filters_there_is_no_flag_to_keep():
    folded = fold_watermark([watermark(), combine()])
    assert folded[0].params["keep_column"] is None and folded[1].params["keep_column"] is None
    assert folded[1].params["event_column"] == EVENT_MICROS


@pytest.mark.parametrize("between", [
    [op("map", udf="fn")],  # rows made by Python: their event times are not the source's
    [op("filter", udf="fn")],  # a Python filter runs in mapInArrow
    [op("select", exprs=["`user`", "amount * 2 AS amount", "ts"])],  # a column changed after the watermark
    [op("select", exprs=["*"])],
    [op("with_columns", columns={"ts": "ts - INTERVAL 1 HOUR"})],
    [op("watermark", ts_column="ts", lag_us=0)],
])
def test_a_stage_that_changes_rows_or_columns_between_the_two_is_left_as_it_is(between):
    ops = [watermark(), *between, combine()]
    assert fold_watermark(ops) == ops


@pytest.mark.parametrize("ops", [
    [op("filter", condition="amount > 0.1"), combine()],  # no watermark in this stage
    [watermark(), combine(), op("select", exprs=["user"])],  # the pre-aggregate does not end the stage
    [watermark(), combine(window={"type": "sliding", "size_us": 10_000_000, "slide_us": 5_000_000})],
    [watermark(), combine(window={"type": "session", "gap_us": 5_000_000})],
])
def test_a_stage_without_a_pre_aggregate_of_one_window_a_row_at_its_end_is_left_as_it_is(ops):
    assert fold_watermark(ops) == ops


def test_a_source_chain_keyed_for_its_window_folds_its_watermark():
    from runtime.messages import OutputDescriptor
    from runtime.taskmanager.chain import OperatorChain, SparkStage

    ops = [op("source"), watermark(), op("filter", condition="amount > 0.1"), combine()]
    chain = OperatorChain.build(ops, [OutputDescriptor("window", "hash", ["user"], 2)], 128)
    [stage] = chain.stages
    assert isinstance(stage, SparkStage) and stage.key_output is not None
    assert stage.ops == fold_watermark(ops[1:]) != ops[1:]
    assert stage.assigner is chain.assigner is not None


def test_a_chain_ending_in_a_stateful_operator_still_gets_a_spark_pass_for_its_key_groups():
    from runtime.messages import OutputDescriptor
    from runtime.taskmanager.chain import OperatorChain, SparkStage, StatefulStage

    ops = [op("window_aggregate", **COMBINE)]
    chain = OperatorChain.build(ops, [OutputDescriptor("next", "hash", ["user"], 2)], 128)
    assert [type(s) for s in chain.stages] == [StatefulStage, SparkStage]
    assert [o.kind for o in chain.stages[-1].ops] == ["union"] and chain.stages[-1].key_output is not None
