"""The benchmark's comparison: which configurations each side is tried in, which is its best, the order of the
rounds, and the ratio's spread over them."""
from __future__ import annotations

import pytest

from tests.benchmarks.comparison import (FLINKBENCH, OURS_JVM, SPARK_JVM, STRUCTURED_STREAMING, Setup, best,
                                         capacity_loads, interleaved, lowest_median, other_jvm, ratios, rows_per_cpu_second,
                                         spread, sweep_plan)


def test_both_sides_sweep_the_same_sizes_with_their_own_jvm_and_ours_adds_its_adaptive_sizing():
    ours, theirs = sweep_plan(FLINKBENCH, [2, 5]), sweep_plan(STRUCTURED_STREAMING, [2, 5])
    assert [s.rows_per_batch for s in ours] == [None, 2, 5]
    assert [s.rows_per_batch for s in theirs] == [2, 5]
    assert {s.jvm for s in ours} == {OURS_JVM} and {s.jvm for s in theirs} == {SPARK_JVM}
    assert other_jvm(theirs[1]) == Setup(STRUCTURED_STREAMING, 5, OURS_JVM)


def test_a_setup_refuses_what_cannot_be_run():
    with pytest.raises(ValueError, match="adaptively"):
        Setup(STRUCTURED_STREAMING, None, SPARK_JVM)
    with pytest.raises(ValueError, match="JVM profile"):
        Setup(FLINKBENCH, 2, "tuned")
    with pytest.raises(ValueError, match="side"):
        Setup("flink", 2, SPARK_JVM)
    assert Setup.from_dict(Setup(FLINKBENCH, None, OURS_JVM).as_dict()) == Setup(FLINKBENCH, None, OURS_JVM)


def test_the_best_is_the_fastest_run_and_a_failed_run_never_wins():
    a, b, c = (Setup(STRUCTURED_STREAMING, n, SPARK_JVM) for n in (2, 5, 10))
    assert best([(a, 3.0), (b, None), (c, 7.0)]) == c
    assert best([(a, 3.0), (b, 3.0)]) == a, "the first of equals"
    with pytest.raises(ValueError, match="no configuration"):
        best([(a, None)])


def test_rounds_alternate_which_side_goes_first():
    assert interleaved(3) == [(0, FLINKBENCH), (0, STRUCTURED_STREAMING), (1, STRUCTURED_STREAMING), (1, FLINKBENCH),
                              (2, FLINKBENCH), (2, STRUCTURED_STREAMING)]
    with pytest.raises(ValueError):
        interleaved(0)


def test_the_ratio_is_taken_round_by_round_with_its_spread_and_a_failed_round_has_none():
    found = ratios([6.0, 4.0, 5.0, 1.0], [4.0, 4.0, 2.0, None])
    assert found["per_round"] == [1.5, 1.0, 2.5, None]
    assert (found["min"], found["median"], found["max"]) == (1.0, 1.5, 2.5)
    assert spread([None]) == {"min": None, "median": None, "max": None}
    with pytest.raises(ValueError, match="rounds"):
        ratios([1.0], [])


def test_rows_per_cpu_second_and_loads():
    assert rows_per_cpu_second(1000, 4.0) == 250
    assert rows_per_cpu_second(1000, 0.0) is None
    assert capacity_loads(1000.0, (0.05, 0.5)) == [(0.05, 50.0), (0.5, 500.0)]
    with pytest.raises(ValueError):
        capacity_loads(0.0, (0.5,))


def test_the_best_trigger_has_the_lowest_median_and_a_failed_run_never_wins():
    runs = {"default": {"median_s": 2.1}, "100 milliseconds": {"median_s": 1.7}, "1 second": {"error": "boom"}}
    assert lowest_median(runs) == "100 milliseconds"
    assert lowest_median({"default": {"error": "boom"}}) is None
