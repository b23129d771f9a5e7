"""STDDEV_POP, STDDEV_SAMP, VAR_POP and VAR_SAMP (STDDEV, VARIANCE) as Flink computes them: reduced to SUM and
COUNT before the aggregation is planned, as Flink's planner reduces them to an M2 (the sum of squared deviations)
and a COUNT.

``VAR_POP(x)`` is ``M2 / COUNT(x)`` with ``M2 = SUM(x * x) - SUM(x) * SUM(x) / COUNT(x)``; VAR_SAMP divides by
``COUNT(x) - 1`` (NULL for one row); the STDDEVs are their ``POWER(..., 0.5)``. M2 is a DOUBLE (a DECIMAL's stays
DECIMAL), and the result is cast to the type of AVG over ``x``: an INT for an INT, truncated as Flink's is. A
FILTER clause filters each part.
"""
from __future__ import annotations

from sqlglot import exp

from runtime.sql.arithmetic import aggregate_type
from runtime.sql.errors import UnsupportedSqlError
from runtime.sql.typing import infer_type

# sqlglot's node -> (sample: divide by COUNT - 1, root: the standard deviation)
REDUCED: dict[type[exp.Expr], tuple[bool, bool]] = {
    exp.VariancePop: (False, False), exp.Variance: (True, False), exp.StddevPop: (False, True),
    exp.StddevSamp: (True, True), exp.Stddev: (True, True)}


def reduced(converter, select: exp.Select, scope) -> exp.Select:
    """``select`` (a copy, when it has any) with each statistical aggregate replaced by its SUM/COUNT form."""
    if not any(True for _ in select.find_all(*REDUCED)):
        return select
    select = select.copy()
    calls: list[exp.Expr] = list(select.find_all(*REDUCED))
    for call in calls:
        if call.find_ancestor(exp.Window, exp.Subquery) is not None:
            continue  # OVER and subqueries: planned (or refused) where they are
        target = call.parent if isinstance(call.parent, exp.Filter) else call
        target.replace(_formula(converter, call, scope, target.args.get("expression") if target is not call else None))
    return select


def _formula(converter, call: exp.Expr, scope, condition: exp.Expr | None) -> exp.Expr:
    arg = call.this
    if isinstance(arg, exp.Distinct):
        raise converter.error(call, f"{call.sql_name()}(DISTINCT ...) is not supported", UnsupportedSqlError)
    source = infer_type(scope.typed(arg), scope.types)
    result = aggregate_type("avg", source)
    sample, root = REDUCED[type(call)]

    def agg(cls, value: exp.Expr) -> exp.Expr:
        made = cls(this=value.copy())
        return exp.Filter(this=made, expression=condition.copy()) if condition is not None else made
    exact = "DOUBLE" if not result.startswith("DECIMAL") else result  # the sums' type: Flink's M2 is a DOUBLE
    x = exp.Paren(this=arg.copy() if source == exact else _cast(arg.copy(), exact))
    total = _cast(agg(exp.Sum, x), exact)
    count = agg(exp.Count, x)
    difference = exp.Sub(this=agg(exp.Sum, exp.Mul(this=x, expression=x.copy())),
                         expression=exp.Div(this=exp.Mul(this=total, expression=total.copy()), expression=count))
    divisor = count.copy() if not sample else exp.Case(
        ifs=[exp.If(this=exp.EQ(this=count.copy(), expression=exp.Literal.number(1)), true=exp.Null())],
        default=exp.Sub(this=count.copy(), expression=exp.Literal.number(1)))
    value: exp.Expr = exp.Div(this=exp.Paren(this=difference), expression=exp.Paren(this=divisor))
    if root:
        value = exp.Pow(this=value, expression=exp.Literal.number("0.5"))
    return _cast(value, result)


def _cast(value: exp.Expr, type_: str) -> exp.Expr:
    return exp.Cast(this=value, to=exp.DataType.build(type_, dialect="spark"))
