"""Static types of SQL expressions as Flink derives them, and expressions given Flink's arithmetic.

Column references, literals, casts and arithmetic are typed by Flink's rules (runtime.sql.arithmetic);
other expressions (function calls) by sqlglot's type inference over the column -> type mapping. The
planner declares every field's type from here (DESCRIBE of a view, a Table's schema, the aggregates'
state), and :func:`flink_expression` rewrites what Spark would compute otherwise (integer division).
"""
from __future__ import annotations

import sqlglot
from sqlglot import exp
from sqlglot.optimizer.annotate_types import annotate_types
from sqlglot.optimizer.qualify import qualify

from runtime.sql import arithmetic
from runtime.sql.errors import SqlError
from runtime.sql.types import spark_type

INTEGRAL = ("TINYINT", "SMALLINT", "INT", "BIGINT")
_SCRATCH = "__scratch"
_ARITHMETIC = (exp.Add, exp.Sub, exp.Mul, exp.Div, exp.Mod)


def annotate(expr: exp.Expr, columns: dict[str, str]) -> exp.Expr:
    """A copy of ``expr`` with ``.type`` set on every node by sqlglot, its columns typed by ``columns``."""
    select = exp.select(exp.alias_(expr.copy(), "__out")).from_(_SCRATCH)
    schema = {_SCRATCH: {name: type_ for name, type_ in columns.items()}}
    try:
        qualified = qualify(select, schema=schema, dialect="spark", validate_qualify_columns=False,
                            quote_identifiers=False, identify=False)
        return annotate_types(qualified, schema=schema, dialect="spark").expressions[0].this
    except (sqlglot.errors.SqlglotError, KeyError, ValueError):
        return expr


def infer_type(expr: exp.Expr, columns: dict[str, str]) -> str:
    """The Spark DDL type of ``expr`` (Flink's rules first), or STRING when it cannot be told."""
    return type_of(expr, columns) or "STRING"


def type_of(expr: exp.Expr, columns: dict[str, str]) -> str | None:
    """The type of ``expr``, or None when neither Flink's rules here nor sqlglot can tell."""
    if isinstance(expr, exp.Column):
        return columns.get(expr.name)
    if isinstance(expr, (exp.Paren, exp.Neg, exp.Alias)):
        return type_of(expr.this, columns)
    if isinstance(expr, exp.Literal):
        return _literal_type(expr)
    if isinstance(expr, (exp.Cast, exp.TryCast)):
        return _spark(expr.to)
    if isinstance(expr, _ARITHMETIC):
        left, right = type_of(expr.this, columns), type_of(expr.expression, columns)
        found = arithmetic.binary_type(type(expr), left, right) if left and right else None
        if found is not None:
            return found
    if isinstance(expr, exp.IntDiv):
        return "BIGINT"
    return _annotated(expr, columns)


def flink_expression(expr: exp.Expr, columns: dict[str, str]) -> exp.Expr:
    """A copy of ``expr`` (its columns resolved to ``columns``' fields) computing what Flink computes: an integer
    divided by an integer is an integer division in the wider type."""
    def visit(node: exp.Expr) -> exp.Expr:
        for key, value in list(node.args.items()):
            if isinstance(value, exp.Expr):
                node.set(key, visit(value))
            elif isinstance(value, list):
                node.set(key, [visit(v) if isinstance(v, exp.Expr) else v for v in value])
        if isinstance(node, exp.Div):
            rewritten = arithmetic.integer_division(node, type_of(node.this, columns), type_of(node.expression, columns))
            if rewritten is not None:
                return rewritten
        return node
    return visit(expr.copy())


def _literal_type(literal: exp.Literal) -> str:
    text = literal.this
    if literal.is_string:
        return "STRING"
    if "e" in text.lower():
        return "DOUBLE"
    if "." in text:
        digits = text.lstrip("-").replace(".", "").lstrip("0") or "0"
        scale = len(text.split(".", 1)[1])
        return f"DECIMAL({max(len(digits), scale, 1)},{scale})"
    return "INT" if -2**31 <= int(text) < 2**31 else "BIGINT"


def _spark(dtype: exp.DataType) -> str | None:
    try:
        return spark_type(dtype)
    except SqlError:
        return None


def _annotated(expr: exp.Expr, columns: dict[str, str]) -> str | None:
    dtype = getattr(annotate(expr, columns), "type", None)
    if dtype is None or dtype.this in (exp.DataType.Type.UNKNOWN, exp.DataType.Type.NULL):
        return None
    return _spark(dtype)


def is_integral(type_: str) -> bool:
    """Whether a Spark type is an integer type (AVG and SUM over it stay integers, as in Flink)."""
    return type_ in INTEGRAL
