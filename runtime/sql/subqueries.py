"""Subqueries in WHERE and in the SELECT list, planned into joins as Flink's planner decorrelates them.

``x IN (SELECT y ...)`` and ``EXISTS (SELECT ...)`` become semi joins, their negations anti joins (``NOT IN``
null-aware: a NULL on either side makes it not true), and a scalar subquery a left join with its one row (or,
correlated, its row per correlation key; a COUNT that finds nothing is 0). A subquery is correlated through
equalities between its columns and the outer query's in its WHERE; they become the join's keys. Anything else
that refers to the outer query is refused by name.
"""
from __future__ import annotations

from sqlglot import exp

from runtime.sql.errors import UnsupportedSqlError
from runtime.sql.joins import aligned_keys
from runtime.sql.logical import Join
from runtime.sql.scope import Entry, Scope, resolves

VALUE, KEY = "__sq{}_value", "__sq{}_key{}"


def has_subquery(expr: exp.Expr | None) -> bool:
    """Whether ``expr`` holds a subquery (IN, EXISTS or scalar)."""
    return expr is not None and any(True for _ in expr.find_all(exp.Subquery, exp.Exists))


def plan_where(converter, scope: Scope, condition: exp.Expr) -> tuple[Scope, exp.Expr | None]:
    """WHERE's IN/EXISTS conjuncts as semi and anti joins, scalar subqueries as left joins; the rest of WHERE."""
    rest = []
    for conjunct in (condition.flatten() if isinstance(condition, exp.And) else [condition]):
        negated = isinstance(conjunct, exp.Not)
        inner = conjunct.this if negated else conjunct
        if isinstance(inner, exp.In) and isinstance(inner.args.get("query"), exp.Subquery):
            scope = _semi(converter, scope, inner.args["query"].this, negated, inner.this)
        elif isinstance(inner, exp.Exists):
            scope = _semi(converter, scope, inner.this, negated, None)
        else:
            rest.append(conjunct)
    scope, replaced = plan_scalars(converter, scope, rest)
    return scope, exp.and_(*replaced) if replaced else None


def plan_scalars(converter, scope: Scope, exprs: list[exp.Expr]) -> tuple[Scope, list[exp.Expr]]:
    """Scalar subqueries in ``exprs`` as left joins; ``exprs`` with each replaced by its result column."""
    out = []
    for expr in exprs:
        for sub in list(expr.find_all(exp.Subquery)):
            if isinstance(sub.parent, exp.In) or sub.find_ancestor(exp.Exists):
                raise converter.error(sub, "IN and EXISTS with a subquery are supported as conditions of WHERE "
                                           "(AND-ed), not inside other expressions", UnsupportedSqlError)
            scope, column = _scalar(converter, scope, sub.this)
            expr = _replace(expr, sub, column)
        out.append(expr)
    return scope, out


def _replace(expr: exp.Expr, old: exp.Expr, new: exp.Expr) -> exp.Expr:
    if expr is old:
        return new
    old.replace(new)
    return expr


def _semi(converter, outer: Scope, select: exp.Expr, negated: bool, probe: exp.Expr | None) -> Scope:
    n = _counter(converter)
    query, pairs = _decorrelated(converter, outer, select, n)
    left_keys = [f for f, _ in pairs]
    right_keys = [KEY.format(n, i) for i in range(len(pairs))]
    null_aware = None
    if probe is not None:
        probe_field = outer.field_of(probe)
        if probe_field is None:
            raise converter.error(probe, "IN (subquery) takes a column on its left here", UnsupportedSqlError)
        if len(select.expressions) != 1:
            raise converter.error(select, "a subquery of IN selects exactly one column")
        query.set("expressions", [exp.alias_(select.expressions[0].copy(), VALUE.format(n), quoted=True)]
                  + query.expressions)
        if negated:
            null_aware = [probe_field, VALUE.format(n)]
        else:
            left_keys.append(probe_field)
            right_keys.append(VALUE.format(n))
    elif not query.expressions:
        query.set("expressions", [exp.alias_(exp.Literal.number(1), VALUE.format(n), quoted=True)])
    right = converter.query(query)
    left, right, lkeys, rkeys = aligned_keys(outer.node, right, list(zip(left_keys, right_keys)), None)
    node = Join(list(left.fields), left, right, "anti" if negated else "semi", lkeys, rkeys, null_aware=null_aware,
                emit_final=converter.batch)
    return Scope(node, outer.entries, outer.position)


def _scalar(converter, outer: Scope, select: exp.Expr) -> tuple[Scope, exp.Expr]:
    if not isinstance(select, exp.Select) or len(select.expressions) != 1:
        raise converter.error(select, "a scalar subquery selects exactly one column")
    n = _counter(converter)
    query, pairs = _decorrelated(converter, outer, select, n)
    value = select.expressions[0]
    query.set("expressions", [exp.alias_(value.copy(), VALUE.format(n), quoted=True)] + query.expressions)
    if pairs:
        if query.args.get("group") is not None:
            raise converter.error(select, "a correlated scalar subquery with its own GROUP BY is not supported",
                                  UnsupportedSqlError)
        query.set("group", exp.Group(expressions=[k.this.copy() for k in query.expressions[1:]]))
    right = converter.query(query)
    left, right, lkeys, rkeys = aligned_keys(outer.node, right, [(f, KEY.format(n, i)) for i, (f, _) in
                                                                 enumerate(pairs)], None)
    node = Join(list(left.fields) + list(right.fields), left, right, "left", lkeys, rkeys, emit_final=converter.batch)
    scope = Scope(node, outer.entries + [Entry(None, f.name, f.name) for f in right.fields], outer.position)
    column: exp.Expr = exp.column(VALUE.format(n), quoted=True)
    unwrapped = value.this if isinstance(value, exp.Alias) else value
    if pairs and isinstance(unwrapped, exp.Count):  # no correlated row: COUNT is 0, not NULL
        column = exp.Coalesce(this=column, expressions=[exp.Literal.number(0)])
    return scope, column


def _decorrelated(converter, outer: Scope, select: exp.Expr, n: int) -> tuple[exp.Select, list[tuple[str, exp.Expr]]]:
    """The subquery without its correlation (a copy whose WHERE keeps its own conditions and whose SELECT list
    is the inner side of each correlation, named KEY) and the (outer field, inner expression) pairs."""
    if not isinstance(select, exp.Select):
        raise converter.error(select, f"a {select.key.upper()} subquery is not supported here", UnsupportedSqlError)
    inner = converter.from_clause(select)
    where = select.args.get("where")
    own, pairs = [], []
    for c in (where.this.flatten() if where is not None and isinstance(where.this, exp.And)
              else [where.this] if where is not None else []):
        sides = _correlation(converter, inner, outer, c)
        if sides is None:
            own.append(c)
        else:
            pairs.append(sides)
    query = select.copy()
    query.set("where", exp.Where(this=exp.and_(*own)) if own else None)
    query.set("expressions", [exp.alias_(e.copy(), KEY.format(n, i), quoted=True) for i, (_, e) in enumerate(pairs)])
    query.set("order", None)
    return query, pairs


def _correlation(converter, inner: Scope, outer: Scope, condition: exp.Expr) -> tuple[str, exp.Expr] | None:
    """(outer field, inner expression) of ``inner = outer`` in a subquery's WHERE; None for its own conditions."""
    outside = [c for c in condition.find_all(exp.Column) if not resolves(inner, c)]
    if not outside:
        return None
    if isinstance(condition, exp.EQ):
        for mine, theirs in ((condition.this, condition.expression), (condition.expression, condition.this)):
            if isinstance(theirs, exp.Column) and not resolves(inner, theirs) and \
                    all(resolves(inner, c) for c in mine.find_all(exp.Column)):
                return outer.resolve(theirs), mine
    for column in outside:
        outer.resolve(column)  # unknown everywhere: the usual error, naming the column
    raise converter.error(condition, f"correlated condition {condition.sql(dialect='spark')} is not supported: a "
                                     "subquery may refer to the outer query only in equalities (inner = outer)",
                          UnsupportedSqlError)


def _counter(converter) -> int:
    converter.subqueries = getattr(converter, "subqueries", 0) + 1
    return converter.subqueries
