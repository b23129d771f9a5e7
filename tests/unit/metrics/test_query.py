"""The metric endpoints' query language: get=, agg= and entity lists, and Flink's aggregates."""
from __future__ import annotations

import pytest

from runtime.metrics import query


def test_names_and_ids_read_comma_separated_lists():
    assert query.names(None) is None and query.names(" a, b ,,c") == ["a", "b", "c"]
    assert query.ids("tm-1,tm-2") == {"tm-1", "tm-2"} and query.ids("") is None


def test_aggregates_default_to_all_and_refuse_unknown_names():
    assert query.aggregates(None) == query.AGGREGATES and query.aggregates("MAX, min") == ("max", "min")
    with pytest.raises(query.QueryError, match="'agg' has 'p42'"):
        query.aggregates("max,p42")


def test_indices_read_flink_ranges():
    assert query.indices("1,3,5-7") == {1, 3, 5, 6, 7} and query.indices(None) is None
    for bad in ("x", "2-", "4-2", "-1"):
        with pytest.raises(query.QueryError, match="'subtasks'"):
            query.indices(bad)


def test_values_are_strings_integral_ones_without_a_fraction():
    assert query.as_text(5.0) == "5" and query.as_text(0.25) == "0.25" and query.as_text(-(2.0**63)) == "-9.223372036854776e+18"
    assert query.pick({"b": 1.0, "a": 2.5}, None) == [{"id": "a"}, {"id": "b"}]
    assert query.pick({"b": 1.0, "a": 2.5}, ["a", "zz"]) == [{"id": "a", "value": "2.5"}]


def test_skew_is_flinks_mean_absolute_deviation_share():
    assert query.skew([]) == 0.0 and query.skew([0, 0]) == 0.0 and query.skew([5, 5, 5]) == 0.0
    assert query.skew([100, 200, 300]) == pytest.approx(100 / 3)
    assert query.skew([0, 0, 0, 1000]) == 100.0, "capped at 100"


def test_aggregate_over_entities_that_have_the_metric():
    rows = query.aggregate([{"x": 1.0}, {"x": 3.0, "y": 2.0}, {}], ["x", "y", "z"], ("min", "avg", "sum"))
    assert rows == [{"id": "x", "min": 1.0, "avg": 2.0, "sum": 4.0}, {"id": "y", "min": 2.0, "avg": 2.0, "sum": 2.0}]
    assert query.aggregate([{"x": 1.0}, {"y": 1.0}], None, query.AGGREGATES) == [{"id": "x"}, {"id": "y"}]
