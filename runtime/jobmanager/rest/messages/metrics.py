"""Metrics as Flink's metric endpoints send them: one value per id, or aggregates over entities."""
from __future__ import annotations

from runtime.jobmanager.rest.fields import F, message


@message
class Metric:
    """One metric: its id alone when listing what there is, with its value (a string, as Flink sends it)
    when asked for with ``get=`` (``/watermarks``: ``<subtask>.currentInputWatermark``)."""
    id: str = F("id")
    value: str | None = F("value", default=None, omit_none=True)


@message
class AggregatedMetric:
    """One metric over several subtasks, TaskManagers or jobs: the aggregates ``agg=`` asked for."""
    id: str = F("id")
    min: float | None = F("min", default=None, omit_none=True)
    max: float | None = F("max", default=None, omit_none=True)
    avg: float | None = F("avg", default=None, omit_none=True)
    sum: float | None = F("sum", default=None, omit_none=True)
    skew: float | None = F("skew", default=None, omit_none=True,
                           doc="mean absolute deviation as a percentage of the mean (at most 100), as Flink computes it")
