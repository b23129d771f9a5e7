"""Static types of SQL expressions (sqlglot's type inference over a column -> type mapping).

Types here are for what the client shows before a job runs (DESCRIBE of a view, a Table's schema)
and for the few places where Flink's typing changes the answer (integer division). The runtime
itself takes every column's type from the Arrow data Spark produces.
"""
from __future__ import annotations

import sqlglot
from sqlglot import exp
from sqlglot.optimizer.annotate_types import annotate_types
from sqlglot.optimizer.qualify import qualify

from runtime.sql.errors import SqlError
from runtime.sql.types import spark_type

INTEGRAL = ("TINYINT", "SMALLINT", "INT", "BIGINT")
_SCRATCH = "__scratch"


def annotate(expr: exp.Expr, columns: dict[str, str]) -> exp.Expr:
    """A copy of ``expr`` with ``.type`` set on every node, its columns typed by ``columns``."""
    select = exp.select(exp.alias_(expr.copy(), "__out")).from_(_SCRATCH)
    schema = {_SCRATCH: {name: type_ for name, type_ in columns.items()}}
    try:
        qualified = qualify(select, schema=schema, dialect="spark", validate_qualify_columns=False,
                            quote_identifiers=False, identify=False)
        return annotate_types(qualified, schema=schema, dialect="spark").expressions[0].this
    except (sqlglot.errors.SqlglotError, KeyError, ValueError):
        return expr


def infer_type(expr: exp.Expr, columns: dict[str, str]) -> str:
    """The Spark DDL type of ``expr``, or STRING when sqlglot cannot tell."""
    typed = annotate(expr, columns)
    dtype = getattr(typed, "type", None)
    if dtype is None or dtype.this in (exp.DataType.Type.UNKNOWN, exp.DataType.Type.NULL):
        return "STRING"
    try:
        return spark_type(dtype)
    except SqlError:
        return "STRING"


def is_integral(type_: str) -> bool:
    """Whether a Spark type is an integer type (AVG and SUM over it stay integers, as in Flink)."""
    return type_ in INTEGRAL
