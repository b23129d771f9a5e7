"""The driver's time on a query before any stage (runtime.taskmanager.driver_time), from the JSON a Spark 4 driver's
QueryPlanningTracker gave for a bundle's projection under Spark's defaults (its optimizer computed it)."""
from __future__ import annotations

from types import SimpleNamespace

from runtime.taskmanager.driver_time import driver_seconds, phase_seconds

PHASES = {"planning": {"startTimeMs": 1795875037782, "endTimeMs": 1795875037789},
          "optimization": {"startTimeMs": 1795875003466, "endTimeMs": 1795875037521},
          "analysis": {"startTimeMs": 1795875003123, "endTimeMs": 1795875003205}}


def test_the_driver_time_adds_analysis_optimization_and_planning():
    assert phase_seconds(PHASES) == (7 + 34_055 + 82) / 1000


def test_a_phase_not_run_yet_counts_nothing():
    assert phase_seconds({"analysis": {"startTimeMs": 10, "endTimeMs": 25}}) == 0.015
    assert phase_seconds({}) == 0.0


def test_a_frame_without_a_driver_of_ours_or_whose_driver_fails_counts_nothing():
    assert driver_seconds(SimpleNamespace()) == 0.0  # a Spark Connect DataFrame has no _jdf

    def gone():
        raise ConnectionError("the JVM went away")
    assert driver_seconds(SimpleNamespace(_jdf=SimpleNamespace(queryExecution=gone))) == 0.0
