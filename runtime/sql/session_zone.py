"""The session time zone while a statement is planned, and TIMESTAMP_LTZ's wall-clock values in it.

Spark carries a TIMESTAMP_LTZ as an instant in its UTC session. Flink shows an instant's fields (its hour, its
text, its value as a TIMESTAMP) in the session time zone (``table.local-time-zone``), and reads a TIMESTAMP
as an instant in that zone. The converter sets the zone for the statement it plans (:func:`planning_in`);
runtime.sql.typing asks :func:`current` when it rewrites an expression, and :func:`local` and :func:`instant`
give the Spark expressions for the two conversions (nothing to convert in UTC).
"""
from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator

from sqlglot import exp

_ZONE: contextvars.ContextVar[str] = contextvars.ContextVar("session_zone", default="UTC")
# functions that read an instant's calendar fields: they get its wall-clock value in the session zone
FIELD_FUNCTIONS = (exp.Extract, exp.Hour, exp.Minute, exp.Second, exp.Year, exp.Month, exp.Day, exp.DayOfMonth,
                   exp.DayOfWeek, exp.DayOfYear, exp.Quarter, exp.Week, exp.TimeToStr, exp.TsOrDsToDate)


@contextlib.contextmanager
def planning_in(zone: str) -> Iterator[None]:
    """Plan the statement with ``zone`` as its session time zone."""
    token = _ZONE.set(zone)
    try:
        yield
    finally:
        _ZONE.reset(token)


def current() -> str:
    """The session time zone of the statement being planned."""
    return _ZONE.get()


def local(value: exp.Expr) -> exp.Expr:
    """A TIMESTAMP_LTZ's wall-clock value in the session zone, as a Spark timestamp read as UTC."""
    zone = current()
    if zone == "UTC":
        return value
    return exp.Anonymous(this="from_utc_timestamp", expressions=[value, exp.Literal.string(zone)])


def instant(value: exp.Expr) -> exp.Expr:
    """The instant a TIMESTAMP (wall-clock) value names in the session zone."""
    zone = current()
    if zone == "UTC":
        return value
    return exp.Anonymous(this="to_utc_timestamp", expressions=[value, exp.Literal.string(zone)])
