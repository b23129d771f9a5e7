"""Each target is read from a run's figures: met, missed by how much, or not measured."""
from __future__ import annotations

from tests.benchmarks import targets
from tests.unit.benchmarks.sample_figures import figures


def by_name(found: dict) -> dict[str, targets.Target]:
    return {t.name: t for t in targets.check(found)}


def test_throughput_must_lead_by_the_ratio_in_every_round():
    found = by_name(figures(ours_rounds=(5e6, 4e6, 4.5e6), theirs_rounds=(3e6, 3.5e6, 3e6)))
    target = found["throughput without checkpoints, every round"]
    assert target.met is False, "round 2 is 1.14x"
    assert target.by == "lowest round 0.16x short"
    assert target.measured == "1.667x, 1.143x, 1.5x"
    assert by_name(figures(ours_rounds=(5e6,) * 3))["throughput with checkpoints, every round"].met is True


def test_a_failed_round_is_no_lead():
    found = by_name(figures(ours_rounds=(5e6, None, 5e6)))
    assert found["throughput without checkpoints, every round"].met is None


def test_latency_targets_per_load_say_by_how_much_and_count_missing_windows():
    found = by_name(figures())
    assert found["latency at 5% load"].met is True
    assert found["latency at 20% load"].met is False and found["latency at 20% load"].by == "max +0.10 s"
    at_half = found["latency at 50% load"]
    assert at_half.met is False and at_half.by == "median +0.10 s, missing windows: 1"
    against = found["latency at 20% load against Structured Streaming"]
    assert against.met is False and against.by == "+0.15 s", "Structured Streaming's best trigger had 1.1 s"
    assert found["latency at 5% load against Structured Streaming"].met is True
    fresh = found["first windows on fresh JVMs"]
    assert fresh.met is False and fresh.by == "slowest +0.40 s"


def test_windows_that_never_arrived_are_a_miss_not_a_figure_left_out():
    found = figures()
    found["latency"]["fresh_jvms"] = {"windows": 0, "windows_expected": 2, "median_s": None, "max_s": None,
                                      "per_window_s": [], "missing": [1.0, 2.0]}
    found["latency"]["flinkbench"][0] = found["latency"]["fresh_jvms"]
    checked = by_name(found)
    assert checked["first windows on fresh JVMs"].met is False
    assert checked["first windows on fresh JVMs"].by == "missing windows: 2"
    assert checked["latency at 5% load"].met is False and checked["latency at 5% load"].by == "missing windows: 2"
    assert checked["latency at 5% load against Structured Streaming"].met is None


def test_first_results_and_memory():
    found = by_name(figures())
    assert found["first result, class archive built"].met is False
    assert found["first result, class archive built"].by == "slowest +0.40 s"
    assert found["first result, first-ever start"].met is None, "a run failed: nothing to call met"
    assert found["cluster peak memory (RSS, over the rounds)"].met is True


def test_nothing_measured_is_neither_met_nor_missed():
    assert {t.met for t in targets.check({})} == {None}
