"""The query language of Flink's REST metric endpoints: ``get=``, ``agg=`` and entity filters.

``GET .../metrics`` lists the metric ids there are (``[{"id": ...}]``); ``?get=a,b`` gives their values
(``[{"id": "a", "value": "1"}]``, values as strings, as Flink sends them). The aggregating endpoints
(``.../subtasks/metrics``, ``/taskmanagers/metrics``, ``/jobs/metrics``) give ``min``, ``max``,
``avg``, ``sum`` and ``skew`` over the selected entities, or the ones ``agg=`` names; ``subtasks=``
takes Flink's list of indices and ranges (``0,2-4``). Pure functions: a malformed parameter raises
QueryError naming it, which the REST layer answers with 400.
"""
from __future__ import annotations

import math
from collections.abc import Iterable

AGGREGATES = ("min", "max", "avg", "sum", "skew")


class QueryError(ValueError):
    """A query parameter that does not read; the message names it and what was expected."""


def names(raw: str | None) -> list[str] | None:
    """``get=a,b`` as a list of metric ids; None when the parameter is absent (list what there is)."""
    if raw is None:
        return None
    return [n.strip() for n in raw.split(",") if n.strip()]


def aggregates(raw: str | None) -> tuple[str, ...]:
    """``agg=min,max``: which aggregates to compute, all of them when absent (as Flink does)."""
    if raw is None or not raw.strip():
        return AGGREGATES
    chosen = tuple(a.strip().lower() for a in raw.split(",") if a.strip())
    unknown = [a for a in chosen if a not in AGGREGATES]
    if unknown:
        raise QueryError(f"query parameter 'agg' has {', '.join(map(repr, unknown))}: expected a comma-separated "
                         f"list of {', '.join(AGGREGATES)}")
    return chosen


def indices(raw: str | None, parameter: str = "subtasks") -> set[int] | None:
    """Flink's integer ranges (``1,3,5-9``) as a set; None when absent (every entity)."""
    if raw is None or not raw.strip():
        return None
    chosen: set[int] = set()
    for part in raw.split(","):
        first, dash, last = part.strip().partition("-")
        try:
            low, high = int(first), int(last) if dash else int(first)
        except ValueError:
            raise QueryError(f"query parameter '{parameter}' has {part.strip()!r}: expected integers or ranges "
                             "such as 0,2-4") from None
        if low < 0 or high < low:
            raise QueryError(f"query parameter '{parameter}' has the empty or negative range {part.strip()!r}")
        chosen.update(range(low, high + 1))
    return chosen


def ids(raw: str | None) -> set[str] | None:
    """A comma-separated list of ids (``taskmanagers=``, ``jobs=``); None when absent."""
    listed = names(raw)
    return set(listed) if listed else None


def as_text(value: float) -> str:
    """A metric value as Flink's REST API writes it: integral values without a fraction."""
    if math.isfinite(value) and value == int(value) and abs(value) < 2**63:
        return str(int(value))
    return repr(value)


def pick(available: dict[str, float], wanted: list[str] | None) -> list[dict]:
    """``[{"id"}]`` of every metric, or ``[{"id", "value"}]`` of the wanted ones that exist, in order."""
    if wanted is None:
        return [{"id": name} for name in sorted(available)]
    return [{"id": name, "value": as_text(available[name])} for name in wanted if name in available]


def skew(values: list[float]) -> float:
    """Flink's data skew: the mean absolute deviation as a percentage of the mean, at most 100."""
    if not values:
        return 0.0
    mean = sum(values) / len(values)
    if mean == 0.0:
        return 0.0
    deviation = sum(abs(mean - v) for v in values) / len(values)
    return min(deviation / mean * 100.0, 100.0)


def aggregate(entities: Iterable[dict[str, float]], wanted: list[str] | None, chosen: tuple[str, ...]) -> list[dict]:
    """Each wanted metric's aggregates over the entities that have it (``[{"id", "min", ...}]``); with
    ``wanted`` None, the ids any entity has."""
    entities = list(entities)
    if wanted is None:
        return [{"id": name} for name in sorted({n for e in entities for n in e})]
    out = []
    for name in wanted:
        found = [e[name] for e in entities if name in e]
        if not found:
            continue
        every = {"min": min(found), "max": max(found), "avg": sum(found) / len(found), "sum": sum(found),
                 "skew": skew(found)}
        out.append({"id": name, **{a: every[a] for a in chosen}})
    return out
