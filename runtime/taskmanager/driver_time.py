"""The time a bundle's query spent on Spark's driver before any stage ran: analysis, optimisation, planning.

Spark's driver times these phases of every query itself (its ``QueryPlanningTracker``, what ``EXPLAIN`` and
the SQL tab report). Under Spark's defaults the optimizer may compute a whole projection of a bundle's rows
there (``ConvertToLocalRelation``), outside any stage: that time belongs to the subtask, but no stage shows it
(runtime.spark_stages.busy_parts). Read after the bundle's action, as JSON written by the driver's Jackson (four
round trips). A Spark Connect DataFrame has no driver of ours to ask: its time is 0 here, and a read that fails
is logged once and counted as 0, never failing the task.
"""
from __future__ import annotations

import json
import logging

log = logging.getLogger(__name__)

PHASES = ("analysis", "optimization", "planning")  # the tracker's names for the phases before execution

_mappers: dict[int, object] = {}  # a Jackson mapper with Scala support per JVM gateway
_failed: list[bool] = [False]


def driver_seconds(df) -> float:
    """Seconds ``df``'s query spent in PHASES on the driver so far (after its action: all of them)."""
    jdf = getattr(df, "_jdf", None)
    if jdf is None:
        return 0.0
    try:
        tracker = jdf.queryExecution().tracker()
        return phase_seconds(json.loads(_mapper(df.sparkSession.sparkContext).writeValueAsString(tracker.phases())))
    except Exception as err:  # noqa: BLE001 - a JVM going away: the action itself has said so
        (log.debug if _failed[0] else log.warning)("could not read the driver's planning time: %s", err)
        _failed[0] = True
        return 0.0


def phase_seconds(phases: dict) -> float:
    """Seconds in PHASES of the tracker's ``{phase: {startTimeMs, endTimeMs}}``."""
    ms = 0
    for name in PHASES:
        summary = phases.get(name) or {}
        ms += max(0, int(summary.get("endTimeMs") or 0) - int(summary.get("startTimeMs") or 0))
    return ms / 1000.0


def _mapper(context):
    key = id(context._gateway)
    if key not in _mappers:
        jvm = context._jvm
        scala = getattr(jvm.com.fasterxml.jackson.module.scala, "DefaultScalaModule$").__getattr__("MODULE$")
        _mappers.clear()  # a new JVM: the old one's mapper is gone with it
        _mappers[key] = jvm.com.fasterxml.jackson.databind.ObjectMapper().registerModule(scala)
    return _mappers[key]
