"""Flink's arithmetic on Spark: result types as Flink derives them, and expressions rewritten where Spark's
meaning differs.

Flink (Calcite) keeps integer arithmetic integral: ``INT / INT`` is an INT division truncating toward zero
(``-39 / 4`` is -9, Spark says -9.75), ``%`` and ``MOD`` take the dividend's sign, and INT and BIGINT wrap
around on overflow (TaskManager sessions run Spark without ANSI mode, whose arithmetic then wraps as Java's).
DECIMAL results follow Flink's precision and scale rules (LogicalTypeMerging), which Spark's match for
+, -, / and %; aggregates follow Flink's result types (SUM of INT is INT, AVG of INT is INT, AVG of
DECIMAL(p, s) is DECIMAL(38, max(6, s))). Types are Spark DDL strings, as everywhere in the planner.
"""
from __future__ import annotations

import re

from sqlglot import exp

INTEGRAL = {"TINYINT": 8, "SMALLINT": 16, "INT": 32, "BIGINT": 64}
_AS_DECIMAL = {"TINYINT": (3, 0), "SMALLINT": (5, 0), "INT": (10, 0), "BIGINT": (19, 0)}
_DECIMAL = re.compile(r"DECIMAL\((\d+),\s*(\d+)\)")
MAX_PRECISION = 38


def decimal_of(type_: str) -> tuple[int, int] | None:
    """(precision, scale) of a DECIMAL type, or of an integer type as Flink widens it; None for others."""
    match = _DECIMAL.fullmatch(type_.replace(" ", ""))
    if match:
        return int(match.group(1)), int(match.group(2))
    return _AS_DECIMAL.get(type_)


def _decimal(precision: int, scale: int) -> str:
    """DECIMAL(p, s) adjusted as Flink (and Spark) do past 38 digits: the scale gives way, down to 6."""
    if precision > MAX_PRECISION:
        scale = max(MAX_PRECISION - (precision - scale), min(scale, 6))
        precision = MAX_PRECISION
    return f"DECIMAL({precision},{scale})"


def binary_type(op: type, left: str, right: str) -> str | None:
    """The result type of ``left op right`` for +, -, *, / and %; None when Flink's rule is not one of these."""
    if left in INTEGRAL and right in INTEGRAL:
        return max(left, right, key=INTEGRAL.__getitem__)
    if "DOUBLE" in (left, right) or "FLOAT" in (left, right):
        return "FLOAT" if {left, right} <= {"FLOAT"} | set(INTEGRAL) else "DOUBLE"
    a, b = decimal_of(left), decimal_of(right)
    if a is None or b is None:
        return None
    (p1, s1), (p2, s2) = a, b
    if op in (exp.Add, exp.Sub):
        scale = max(s1, s2)
        return _decimal(max(p1 - s1, p2 - s2) + scale + 1, scale)
    if op is exp.Mul:
        return _decimal(p1 + p2, s1 + s2)
    if op is exp.Div:
        scale = max(6, s1 + p2 + 1)
        return _decimal(p1 - s1 + s2 + scale, scale)
    if op is exp.Mod:
        scale = max(s1, s2)
        return _decimal(min(p1 - s1, p2 - s2) + scale, scale)
    return None


def common_type(types: list[str]) -> str | None:
    """The type values of all of ``types`` fit in, as Flink finds it for an ARRAY's elements: the one type, the widest
    integer, DOUBLE next to a floating type, a DECIMAL with the most integer digits and the largest scale; else None."""
    if len(set(types)) == 1:
        return types[0]
    if all(t in INTEGRAL for t in types):
        return max(types, key=INTEGRAL.__getitem__)
    decimals = [decimal_of(t) for t in types]
    if any(t in ("DOUBLE", "FLOAT") for t in types) and all(t in ("DOUBLE", "FLOAT") or d for t, d in zip(types, decimals)):
        return "DOUBLE"
    if None in decimals:
        return None
    scale = max(s for _, s in decimals)  # type: ignore[misc]
    return _decimal(max(p - s for p, s in decimals) + scale, scale)  # type: ignore[misc]


def aggregate_type(fn: str, arg: str | None) -> str:
    """Flink's result type of an aggregate over ``arg``: COUNT is BIGINT, SUM and AVG keep an integer type, SUM of
    DECIMAL(p, s) is DECIMAL(38, s) and AVG DECIMAL(38, max(6, s)), MIN and MAX keep theirs."""
    if fn in ("count", "count_distinct") or arg is None:
        return "BIGINT"
    decimal = _DECIMAL.fullmatch(arg.replace(" ", ""))
    if fn == "sum" and decimal:
        return f"DECIMAL({MAX_PRECISION},{decimal.group(2)})"
    if fn == "avg" and decimal:
        return f"DECIMAL({MAX_PRECISION},{max(6, int(decimal.group(2)))})"
    return arg


def integer_division(node: exp.Expr, left: str | None, right: str | None) -> exp.Expr | None:
    """``a / b`` of two integer types as Flink means it: ``a DIV b`` (truncating toward zero) in the wider type; None
    for other operand types (Spark's ``/`` then is Flink's). The registry's ``/`` renders through this."""
    if left not in INTEGRAL or right not in INTEGRAL:
        return None
    wider = max(left, right, key=INTEGRAL.__getitem__)
    quotient = exp.IntDiv(this=node.this, expression=node.expression)
    return exp.Cast(this=exp.Paren(this=quotient), to=exp.DataType.build(wider))
