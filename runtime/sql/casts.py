"""Flink's CAST and TRY_CAST on Spark, where the two differ (Flink's Type Conversion functions).

* A TIMESTAMP_LTZ as a TIMESTAMP or as STRING is its wall clock in the session time zone, a TIMESTAMP as a
  TIMESTAMP_LTZ the instant it names there (runtime.sql.session_zone).
* A TIMESTAMP(3) as STRING has its three fraction digits (``2024-03-01 09:00:00.700``; Spark drops trailing
  zeros), a BOOLEAN is ``TRUE`` or ``FALSE``.
* A STRING that does not read as a number, boolean, date or time fails a CAST, naming the value, as Flink's
  does, where Spark (without ANSI mode) would give NULL; TRY_CAST gives NULL. Flink reads ``'12.5'`` as the
  INT 12 and refuses ``'1e3'``, as Spark's plain CAST does; Spark's TRY_CAST refuses ``'12.5'``, so TRY_CAST
  becomes Spark's plain CAST (without ANSI mode, NULL for what does not convert). A DECIMAL that does not fit
  is NULL in both.
"""
from __future__ import annotations

from sqlglot import exp

from runtime.sql import session_zone
from runtime.sql.arithmetic import INTEGRAL

TIMESTAMP_TEXT = "yyyy-MM-dd HH:mm:ss.SSS"
STRICT_TARGETS = (*INTEGRAL, "FLOAT", "DOUBLE", "BOOLEAN", "DATE", "TIMESTAMP", "TIMESTAMP_LTZ")


def flink_cast(node: exp.Cast, source: str | None, target: str | None) -> exp.Expr | None:
    """The Spark expression computing Flink's ``CAST``/``TRY_CAST`` of a ``source``-typed value to ``target``, or
    None when Spark's own cast already does."""
    value = node.this
    if source == "TIMESTAMP_LTZ" and target in ("STRING", "TIMESTAMP"):  # the instant's wall clock in the session zone
        value = session_zone.local(value)
        source = "TIMESTAMP"
        if target == "TIMESTAMP":  # still a CAST, so the planner keeps reading its type from it
            return exp.Cast(this=value, to=node.to.copy())
    if source == "TIMESTAMP" and target == "TIMESTAMP_LTZ":
        return exp.Cast(this=session_zone.instant(value), to=node.to.copy())
    if target == "STRING" and source == "TIMESTAMP":
        return exp.Anonymous(this="date_format", expressions=[value, exp.Literal.string(TIMESTAMP_TEXT)])
    if target == "STRING" and source == "BOOLEAN":
        return exp.Upper(this=exp.Cast(this=value, to=exp.DataType.build("STRING")))
    if source == "STRING" and target in STRICT_TARGETS:
        return exp.Cast(this=value, to=node.to.copy()) if node.args.get("safe") else _strict(node, value)
    return None


def _strict(node: exp.Cast, value: exp.Expr) -> exp.Expr:
    """CAST that fails the query on a value that does not convert (Spark's gives NULL)."""
    cast = exp.Cast(this=value, to=node.to.copy())
    failure = exp.Anonymous(this="raise_error", expressions=[exp.Concat(expressions=[
        exp.Literal.string(f"CAST of a STRING to {node.to.sql(dialect='spark')}: cannot read '"), value.copy(),
        exp.Literal.string("'")])])
    converts = exp.Or(this=exp.Is(this=value.copy(), expression=exp.Null()),
                      expression=exp.Not(this=exp.Is(this=cast.copy(), expression=exp.Null())))
    return exp.Case(ifs=[exp.If(this=converts, true=cast)], default=failure)
