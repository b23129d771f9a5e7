"""The expressions of DEFINE and MEASURES, evaluated per row in Python with SQL's NULL rules.

A pattern variable's condition is evaluated for each row against each partial match it could extend,
which is far too often for a Spark action, so the planner (runtime.sql.pattern_expressions) ships each
condition as a small tree of lists and this module evaluates it:

* ``["lit", value]``, ``["dec", "1.5"]`` (DECIMAL), ``["interval", micros]``;
* ``["nav", var, "last" | "first", n, arg]``: ``arg`` on the n-th last (first) row mapped to ``var``
  (``"*"``: every variable) — ``A.price`` is ``LAST(A.price, 0)``;
* ``["col", name]``: a column of the row a ``nav`` or ``agg`` is looking at;
* ``["agg", fn, var, arg]``: COUNT, SUM, AVG, MIN or MAX of ``arg`` over the rows of ``var`` (``arg``
  None: COUNT(*)); AVG of integers is an integer, as in Flink;
* ``["fn", name, *args]``: an operator or function of :data:`FUNCTIONS`.

Which rows a variable has is the caller's: while matching, those mapped so far plus the row being tested
when the condition is the variable's own (or ``"*"``); for MEASURES, the rows of the finished match.
"""
from __future__ import annotations

import datetime
import decimal
import re
from collections.abc import Callable, Sequence
from typing import Any

Rows = Callable[[str], Sequence[dict]]


class ExpressionError(ValueError):
    """A row the expression cannot be evaluated on (a division by zero, a bad cast); names what failed."""


def evaluate(node: list, rows: Rows, row: dict | None = None) -> Any:
    """The value of ``node``; ``rows(var)`` gives a variable's rows, ``row`` the row ``["col"]`` reads."""
    kind = node[0]
    if kind == "lit":
        return node[1]
    if kind == "col":
        return row[node[1]] if row is not None else None
    if kind == "nav":
        _, var, end, n, arg = node
        found = rows(var)
        index = len(found) - 1 - n if end == "last" else n
        return evaluate(arg, rows, found[index]) if 0 <= index < len(found) else None
    if kind == "agg":
        return aggregate(node[1], [evaluate(node[3], rows, r) if node[3] is not None else 1 for r in rows(node[2])])
    if kind == "dec":
        return decimal.Decimal(node[1])
    if kind == "interval":
        return datetime.timedelta(microseconds=node[1])
    if kind == "fn":
        if node[1] in LAZY:
            return LAZY[node[1]](node[2:], rows, row)
        return FUNCTIONS[node[1]](*[evaluate(a, rows, row) for a in node[2:]])
    raise ExpressionError(f"unknown expression {kind!r}")


def holds(node: list, rows: Rows, row: dict | None = None) -> bool:
    """Whether a condition is TRUE (NULL and FALSE both fail it, as in WHERE)."""
    return evaluate(node, rows, row) is True


def aggregate(fn: str, values: list) -> Any:
    """COUNT, SUM, AVG, MIN or MAX of ``values`` (NULLs skipped; SUM/AVG/MIN/MAX of nothing is NULL)."""
    present = [v for v in values if v is not None]
    if fn == "count":
        return len(present)
    if not present:
        return None
    if fn == "min":
        return min(present)
    if fn == "max":
        return max(present)
    total = _numbers(present)
    if fn == "sum":
        return total
    if isinstance(total, int):
        return _int_div(total, len(present))  # Flink: AVG of an integer type is that type, truncated
    return total / len(present)


def _numbers(values: list):
    if any(isinstance(v, float) for v in values):
        return sum(float(v) for v in values)
    return sum(values[1:], values[0])


def _null_safe(fn: Callable) -> Callable:
    def wrapped(*args):
        return None if any(a is None for a in args) else fn(*args)
    return wrapped


def _coerce(a, b):
    """Operands of one arithmetic operation: a float with a DECIMAL computes in floating point."""
    if isinstance(a, decimal.Decimal) and isinstance(b, float) or isinstance(a, float) and isinstance(b, decimal.Decimal):
        return float(a), float(b)
    return a, b


def _int_div(a: int, b: int) -> int:
    if b == 0:
        raise ExpressionError("division by zero")
    quotient = abs(a) // abs(b)
    return quotient if (a >= 0) == (b >= 0) else -quotient


def _divide(a, b):
    a, b = _coerce(a, b)
    if isinstance(a, int) and isinstance(b, int) and not isinstance(a, bool):
        return _int_div(a, b)  # Flink: INT / INT is an integer, truncated toward zero
    if b == 0:
        raise ExpressionError("division by zero")
    return a / b


def _modulo(a, b):
    if b == 0:
        raise ExpressionError("division by zero")
    if isinstance(a, int) and isinstance(b, int):
        return a - b * _int_div(a, b)  # Java's %: the sign of the dividend
    return a - b * int(a / b)


def _arith(op: Callable) -> Callable:
    return _null_safe(lambda a, b: op(*_coerce(a, b)))


def _connective(decisive: bool):
    """AND (``decisive`` False) or OR (True) in three-valued logic: the decisive value wins, else NULL beats
    the other value; arguments after the decisive one are not evaluated."""
    def combine(args, rows, row):
        seen_null = False
        for arg in args:
            value = evaluate(arg, rows, row)
            if value is decisive:
                return decisive
            seen_null = seen_null or value is None
        return None if seen_null else not decisive
    return combine


def _case(args, rows, row):
    pairs, default = args[:-1], args[-1]
    for i in range(0, len(pairs), 2):
        if evaluate(pairs[i], rows, row) is True:
            return evaluate(pairs[i + 1], rows, row)
    return evaluate(default, rows, row)


def _coalesce(args, rows, row):
    for arg in args:
        value = evaluate(arg, rows, row)
        if value is not None:
            return value
    return None


def _in(value, *items):
    if value is None:
        return None
    if value in [i for i in items if i is not None]:
        return True
    return None if None in items else False


def _like(text: str, pattern: str) -> bool:
    regex = "".join(".*" if c == "%" else "." if c == "_" else re.escape(c) for c in pattern)
    return re.fullmatch(regex, text, re.S) is not None


def _cast(value, target: str):
    if value is None:
        return None
    try:
        if target in ("TINYINT", "SMALLINT", "INT", "BIGINT"):
            return int(value) if not isinstance(value, str) else int(value.strip())
        if target in ("FLOAT", "DOUBLE"):
            return float(value)
        if target.startswith("DECIMAL"):
            return decimal.Decimal(str(value))
        if target == "STRING":
            return str(value).lower() if isinstance(value, bool) else str(value)
        if target == "BOOLEAN":
            return value if isinstance(value, bool) else str(value).strip().lower() == "true"
    except (ValueError, decimal.InvalidOperation):
        raise ExpressionError(f"cannot cast {value!r} to {target}") from None
    raise ExpressionError(f"CAST to {target} is not supported here")


LAZY: dict[str, Callable] = {"and": _connective(False), "or": _connective(True), "case": _case, "coalesce": _coalesce}

FUNCTIONS: dict[str, Callable] = {
    "not": _null_safe(lambda a: not a),
    "eq": _null_safe(lambda a, b: a == b), "ne": _null_safe(lambda a, b: a != b),
    "lt": _null_safe(lambda a, b: a < b), "le": _null_safe(lambda a, b: a <= b),
    "gt": _null_safe(lambda a, b: a > b), "ge": _null_safe(lambda a, b: a >= b),
    "add": _arith(lambda a, b: a + b), "sub": _arith(lambda a, b: a - b), "mul": _arith(lambda a, b: a * b),
    "div": _null_safe(_divide), "mod": _null_safe(_modulo), "neg": _null_safe(lambda a: -a),
    "abs": _null_safe(abs),
    "is_null": lambda a: a is None, "is_not_null": lambda a: a is not None,
    "is_true": lambda a: a is True, "is_false": lambda a: a is False,
    "between": _null_safe(lambda v, low, high: low <= v <= high),
    "in": _in,
    "like": _null_safe(_like),
    "upper": _null_safe(str.upper), "lower": _null_safe(str.lower), "char_length": _null_safe(len),
    "concat": _null_safe(lambda *parts: "".join(parts)),
    "cast": lambda value, target: _cast(value, target),
}
