"""ROW_NUMBER() for Top-N and deduplication, and OVER aggregates (filled in below)."""
from __future__ import annotations

from sqlglot import exp

from runtime.sql.errors import UnsupportedSqlError


def top_n(converter, select: exp.Select):
    return None


def has_over(select: exp.Select) -> bool:
    return any(select.find_all(exp.Window))


def plan_over(converter, select, scope):
    raise converter.error(select, "OVER windows are not supported yet", UnsupportedSqlError)
