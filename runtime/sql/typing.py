"""Static types of SQL expressions as Flink derives them, and expressions given Flink's arithmetic.

Column references, literals, casts and arithmetic are typed by Flink's rules (runtime.sql.arithmetic);
other expressions (function calls) by sqlglot's type inference over the column -> type mapping. The
planner declares every field's type from here (DESCRIBE of a view, a Table's schema, the aggregates'
state), and :func:`flink_expression` rewrites what Spark would compute otherwise where it depends on more than
one call (DECIMAL operands, CASTs, TIMESTAMP_LTZ in the session zone). Calls themselves, an integer division
among them, are rendered by the function registry (runtime.sql.functions), which types their arguments here.
"""
from __future__ import annotations

import sqlglot
from sqlglot import exp
from sqlglot.optimizer.annotate_types import annotate_types
from sqlglot.optimizer.qualify import qualify

from runtime.sql import arithmetic, casts, session_zone
from runtime.sql.builtins import result_type
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
    if isinstance(expr, (exp.Floor, exp.Ceil)) and expr.args.get("to") is not None:  # FLOOR(ts TO unit): ts's type
        return type_of(expr.this, columns)
    if isinstance(expr, exp.Abs) or (isinstance(expr, (exp.Floor, exp.Ceil)) and expr.args.get("to") is None):
        inner = type_of(expr.this, columns)
        decimal = arithmetic.decimal_of(inner) if inner and inner.startswith("DECIMAL") else None
        if decimal and decimal[1] and not isinstance(expr, exp.Abs):  # FLOOR/CEIL of DECIMAL(p, s): DECIMAL(p - s + 1, 0)
            return f"DECIMAL({decimal[0] - decimal[1] + 1},0)"
        return inner
    if isinstance(expr, exp.Array) or (isinstance(expr, exp.Anonymous) and expr.name.upper() in ("ROW", "MAP")):
        return _constructed(expr, columns)
    if isinstance(expr, exp.Case):  # the branches' type (Flink's CASE needs them alike; raise_error fits any)
        branches = [i.args.get("true") for i in expr.args.get("ifs") or []] + [expr.args.get("default")]
        found = [type_of(b, columns) for b in branches if b is not None and not _is_failure(b)]
        known = [t for t in found if t is not None]
        if known:
            return known[0] if len(set(known)) == 1 else _annotated(expr, columns)
    return _annotated(expr, columns)


def _constructed(expr: exp.Expr, columns: dict[str, str]) -> str | None:
    """The type of ``ARRAY[...]`` (its elements' common type), ``ROW(...)`` (fields named EXPR$0, EXPR$1, ... as in
    Flink) or ``MAP[k, v, ...]``; None when an element's type cannot be told."""
    parts = [type_of(e, columns) for e in expr.expressions]
    if not parts or None in parts:
        return None
    if isinstance(expr, exp.Array):
        element = arithmetic.common_type(parts)
        return f"ARRAY<{element}>" if element else None
    if expr.name.upper() == "ROW":
        return "STRUCT<" + ", ".join(f"`EXPR${i}`: {t}" for i, t in enumerate(parts)) + ">"
    key, value = arithmetic.common_type(parts[0::2]), arithmetic.common_type(parts[1::2])
    return f"MAP<{key},{value}>" if key and value else None


def flink_expression(expr: exp.Expr, columns: dict[str, str]) -> exp.Expr:
    """A copy of ``expr`` (its columns resolved to ``columns``' fields) computing what Flink computes once the
    registry renders its calls (runtime.sql.functions.to_spark with the same ``columns``): integer literals next to
    DECIMALs as Flink types them, CASTs as runtime.sql.casts says, TIMESTAMP_LTZ fields in the session zone."""
    def visit(node: exp.Expr) -> exp.Expr:
        for key, value in list(node.args.items()):
            if isinstance(value, exp.Expr):
                node.set(key, visit(value))
            elif isinstance(value, list):
                node.set(key, [visit(v) if isinstance(v, exp.Expr) else v for v in value])
        if isinstance(node, _ARITHMETIC):
            _decimal_operands(node, columns)
        if isinstance(node, session_zone.FIELD_FUNCTIONS):
            _local_fields(node, columns)
        if isinstance(node, (exp.Cast, exp.TryCast)):
            return casts.flink_cast(node, type_of(node.this, columns), _spark(node.to)) or node
        return node
    return visit(expr.copy())


def _local_fields(node: exp.Expr, columns: dict[str, str]) -> None:
    """A TIMESTAMP_LTZ whose fields a function reads (HOUR, EXTRACT, DATE_FORMAT, ...) in the session zone."""
    for key in ("this", "expression"):
        holder, arg = node, node.args.get(key)
        if isinstance(arg, exp.TimeStrToTime):  # DATE_FORMAT(x, f) reads as DATE_FORMAT(TimeStrToTime(x), f)
            holder, key, arg = arg, "this", arg.this
        if isinstance(arg, exp.Expr) and type_of(arg, columns) == "TIMESTAMP_LTZ":
            holder.set(key, session_zone.local(arg))


def _decimal_operands(node: exp.Expr, columns: dict[str, str]) -> None:
    """An integer literal next to a DECIMAL counts as DECIMAL(10, 0) in Flink (Spark would take its own digits,
    DECIMAL(1, 0) for ``3``, and give ``m / 3`` another scale): it is cast to INT, which Spark widens as Flink does."""
    left, right = type_of(node.this, columns), type_of(node.expression, columns)
    for key, mine, other in (("this", node.this, right), ("expression", node.expression, left)):
        if isinstance(mine, exp.Literal) and not mine.is_string and mine.is_int and (other or "").startswith("DECIMAL"):
            node.set(key, exp.Cast(this=mine.copy(), to=exp.DataType.build(_literal_type(mine))))


def _is_failure(node: exp.Expr) -> bool:
    return isinstance(node, exp.Null) or (isinstance(node, exp.Anonymous) and node.name.lower() == "raise_error")


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
    """The function registry's result type of a call when Flink's is a fixed one (YEAR is a BIGINT, where sqlglot
    says TINYINT), else sqlglot's type of ``expr``."""
    fixed = result_type(expr)
    if fixed is not None:
        return fixed
    dtype = getattr(annotate(expr, columns), "type", None)
    if dtype is None or dtype.this in (exp.DataType.Type.UNKNOWN, exp.DataType.Type.NULL):
        return None
    return _spark(dtype)


def is_integral(type_: str) -> bool:
    """Whether a Spark type is an integer type (AVG and SUM over it stay integers, as in Flink)."""
    return type_ in INTEGRAL
