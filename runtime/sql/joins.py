"""Joins (filled in below)."""
from __future__ import annotations

from runtime.sql.errors import UnsupportedSqlError


def plan(converter, scope, join):
    raise converter.error(join, "JOIN is not supported yet", UnsupportedSqlError)
