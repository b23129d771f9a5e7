"""A window's pre-aggregation (runtime.taskmanager.spark.window_combine) on a real Spark session: partials per
(key, window) from expressions parsed once for every bundle, and missing columns named."""
from __future__ import annotations

import datetime as dt

import pytest

from runtime.taskmanager.spark import missing_columns, window_combine
from tests.helpers.spark_runner import runner_on

SECOND = 1_000_000  # us
TUMBLING = {"keys": ["user"], "ts_column": "ts",
            "window": {"type": "tumbling", "size_us": 10 * SECOND, "slide_us": 10 * SECOND},
            "aggregates": [{"name": "n", "fn": "count"}, {"name": "total", "fn": "sum", "column": "amount"},
                           {"name": "mean", "fn": "avg", "column": "amount"}]}


def parsed_once():
    """An ``expr`` as SparkRunner.expr is, over a dict the test can look into."""
    from pyspark.sql import functions as F

    cache: dict = {}

    def expr(sql: str):
        if sql not in cache:
            cache[sql] = F.expr(sql)
        return cache[sql]
    return expr, cache


def bundle(spark, clicks: list[tuple[int, float, float]]):
    """(user, event time in s, amount) rows as a source bundle."""
    rows = [(user, dt.datetime.fromtimestamp(at, dt.timezone.utc), amount) for user, at, amount in clicks]
    return spark.createDataFrame(rows, "user INT, ts TIMESTAMP, amount DOUBLE")


def expected(clicks: list[tuple[int, float, float]], size_s: int) -> list[tuple]:
    """The partials by definition: per (user, window start) the rows, their count, sum, and avg's sum and count."""
    groups: dict[tuple, list[float]] = {}
    for user, at, amount in clicks:
        groups.setdefault((user, int(at // size_s * size_s) * SECOND), []).append(amount)
    return sorted((user, start, len(a), len(a), sum(a), sum(a), len(a)) for (user, start), a in groups.items())


def partials(df) -> list[tuple]:
    return sorted(tuple(row.values()) for row in df.toArrow().to_pylist())


def test_every_bundle_is_pre_aggregated_with_the_expressions_the_first_one_parsed(spark):
    expr, cache = parsed_once()
    first = [(1, 3.0, 0.5), (1, 9.0, 0.25), (2, 12.0, 1.0), (1, 15.5, 2.0)]
    second = [(2, 1.0, 4.0), (2, 2.0, 1.0), (3, 29.0, 0.125)]
    df = window_combine(bundle(spark, first), TUMBLING, expr)
    assert df.columns == ["user", "__window_start", "__records", "__p_n", "__p_total", "__p_mean_sum", "__p_mean_cnt"]
    assert partials(df) == expected(first, 10)
    parsed = dict(cache)
    assert partials(window_combine(bundle(spark, second), TUMBLING, expr)) == expected(second, 10)
    assert cache == parsed, "the second bundle parsed expressions of its own"


def test_a_sliding_window_as_long_as_its_slide_is_a_tumbling_one(spark):
    clicks = [(1, 3.0, 0.5), (1, 19.0, 0.25), (2, 12.0, 1.0)]
    sliding = {**TUMBLING, "window": {"type": "sliding", "size_us": 5 * SECOND, "slide_us": 5 * SECOND}}
    assert partials(window_combine(bundle(spark, clicks), sliding, parsed_once()[0])) == expected(clicks, 5)


@pytest.mark.parametrize("change, missing", [({"keys": ["usr"]}, "['usr']"), ({"ts_column": "time"}, "['time']"),
                                             ({"aggregates": [{"name": "t", "fn": "sum", "column": "amt"}]}, "['amt']")])
def test_a_missing_column_is_named_with_the_columns_there_are(spark, change, missing):
    with pytest.raises(ValueError) as raised:
        window_combine(bundle(spark, [(1, 3.0, 0.5)]), {**TUMBLING, **change}, parsed_once()[0])
    assert str(raised.value) == f"no column {missing}; available: ['user', 'ts', 'amount']"


def test_missing_columns_are_looked_up_only_for_a_plan_spark_refused(spark):
    df = bundle(spark, [(1, 3.0, 0.5)])
    with pytest.raises(Exception) as refused:
        df.withColumn("k", df["user"] + spark.range(1)["id"])  # resolves no column of df's: refused
    assert missing_columns(refused.value, df, ["usr", "ts", "amt", "usr"]) == ["usr", "amt"]
    assert missing_columns(RuntimeError("the JVM went away"), df, ["usr"]) == [], "not Spark refusing a plan"


def test_a_folded_watermark_sees_the_rows_the_filter_drops_and_the_partials_stay_the_same(spark):
    from runtime.jobgraph import OperatorSpec
    from runtime.taskmanager.chain import EVENT_MICROS, SparkStage, fold_watermark
    from runtime.taskmanager.watermarks import BoundedOutOfOrderness

    runner = runner_on(spark)
    ops = [OperatorSpec("wm", "Timestamps", "watermark", 1, {"ts_column": "ts", "lag_us": 0}),
           OperatorSpec("f", "Filter", "filter", 1, {"condition": "amount > 0.1"}),
           OperatorSpec("s", "Select", "select", 1, {"exprs": ["`user`", "amount", "ts"]}),
           OperatorSpec("c", "Combine", "window_combine", 1, TUMBLING)]
    clicks = [(1, 3.0, 0.5), (1, 9.0, 0.05), (2, 12.0, 0.05), (1, 15.5, 2.0), (3, 29.0, 0.01)]
    answers = {}
    for name, stage_ops in (("observed", ops), ("folded", fold_watermark(ops))):
        stage = SparkStage(stage_ops, [None] * len(ops), assigner=BoundedOutOfOrderness(0))
        table = stage.run(runner, bundle(spark, clicks))
        assert EVENT_MICROS not in table.column_names
        answers[name] = (sorted(tuple(row.values()) for row in table.to_pylist()), stage.assigner.max_seen)
    assert fold_watermark(ops) != ops, "the stage did not fold"
    assert answers["folded"] == answers["observed"]
    rows, max_seen = answers["folded"]
    assert max_seen == 29 * SECOND, "the watermark did not see the row the filter dropped"
    assert [row[:3] for row in rows] == [(1, 0, 1), (1, 10 * SECOND, 1)], "a group the filter emptied was sent"


@pytest.mark.parametrize("condition, error", [("amount >", "PARSE_SYNTAX_ERROR"),
                                              ("amount", "DATATYPE_MISMATCH.FILTER_NOT_BOOLEAN"),
                                              ("amt > 0.1", "UNRESOLVED_COLUMN")])
def test_a_folded_filter_spark_refuses_is_reported_as_an_unfolded_one_is(spark, condition, error):
    from runtime.jobgraph import OperatorSpec
    from runtime.taskmanager.chain import OperatorError, SparkStage, fold_watermark

    runner = runner_on(spark)
    ops = [OperatorSpec("wm", "Timestamps", "watermark", 1, {"ts_column": "ts", "lag_us": 0}),
           OperatorSpec("f", "Filter", "filter", 1, {"condition": condition}),
           OperatorSpec("c", "Combine", "window_combine", 1, TUMBLING)]
    messages = []
    for stage_ops in (ops, fold_watermark(ops)):
        with pytest.raises(OperatorError) as raised:
            SparkStage(stage_ops, [None] * len(ops)).run(runner, bundle(spark, [(1, 3.0, 0.5)]))
        messages.append(str(raised.value))
    assert messages[0].startswith(f"operator 'Filter' (filter): [{error}")
    suggested = " Did you mean one of the following?"  # Spark's list of columns there are, the folded flags among them
    assert messages[1].split(suggested)[0] == messages[0].split(suggested)[0]
