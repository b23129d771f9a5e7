"""ROW_NUMBER() for Top-N and deduplication, and OVER aggregates ordered by a time attribute.

Top-N is Flink's pattern: ``SELECT ... FROM (SELECT ..., ROW_NUMBER() OVER (PARTITION BY k ORDER BY c
DESC) AS rn FROM t) WHERE rn <= N`` (``rn = 1`` with ORDER BY a time column is deduplication). OVER
aggregates: ``agg(x) OVER (PARTITION BY k ORDER BY rowtime ROWS|RANGE BETWEEN ... PRECEDING AND CURRENT
ROW)``, append-only, emitted once the watermark passes each row's time.
"""
from __future__ import annotations

from sqlglot import exp

from runtime.sql.aggregates import FUNCTIONS
from runtime.sql.errors import UnsupportedSqlError
from runtime.sql.logical import UNLIMITED, Aggregate, Calc, Field, Over, Rank
from runtime.sql.scope import Entry, Scope, quoted
from runtime.sql.tables import interval_micros
from runtime.sql.typing import is_integral


def top_n(converter, select: exp.Select):
    """(scope of the ranked rows, the rest of WHERE) when ``select`` is a Top-N query, else None."""
    source = select.args.get("from_")
    where = select.args.get("where")
    if source is None or where is None or not isinstance(source.this, exp.Subquery):
        return None
    inner = source.this.this
    if not isinstance(inner, exp.Select):
        return None
    numbered = [p for p in inner.expressions if isinstance(p, exp.Alias) and isinstance(p.this, exp.Window)
                and isinstance(p.this.this, exp.RowNumber)]
    if not numbered:
        return None
    number = numbered[0]
    limit, rest = _limit(converter, where.this, number.alias)
    if limit is None:
        raise converter.error(number, "ROW_NUMBER() is supported for Top-N only: filter it with "
                                      f"WHERE {number.alias} <= N (or = 1)", UnsupportedSqlError)
    base = inner.copy()
    base.set("expressions", [p for p in inner.expressions if p is not number])
    node = converter.select(base)
    scope = Scope.of(node, None, converter.position)
    window = number.this
    partition = [scope.resolve(c) for c in window.args.get("partition_by") or []]
    order = sort_keys(scope, window.args.get("order"))
    if not order:
        raise converter.error(number, "ROW_NUMBER() needs ORDER BY", UnsupportedSqlError)
    keep_number = _mentions(select, number.alias)
    fields = list(node.fields) + ([Field(number.alias, "BIGINT")] if keep_number else [])
    rank = Rank(fields, node, partition, order, limit, number.alias if keep_number else None,
                emit_final=converter.batch)
    alias = source.this.alias or None
    return Scope(rank, [Entry(alias, f.name, f.name) for f in fields], converter.position), rest


def sort_keys(scope: Scope, order: exp.Order | None) -> list[tuple[str, bool, bool]]:
    """ORDER BY as (field, ascending, nulls first); NULLs first when ascending unless said otherwise, as in Flink."""
    keys = []
    for o in (order or exp.Order()).expressions:
        ascending = not o.args.get("desc")
        nulls_first = o.args.get("nulls_first")
        keys.append((scope.resolve(o.this), ascending, ascending if nulls_first is None else bool(nulls_first)))
    return keys


def order_limit(converter, select: exp.Select, node):
    """``ORDER BY ... LIMIT n`` (and ``LIMIT n`` alone) as a Top-N over the whole result; ORDER BY without LIMIT
    in batch mode as a sort of it. A streaming result without LIMIT has no order to keep: refused by name."""
    order, limit, offset = (select.args.get(c) for c in ("order", "limit", "offset"))
    if offset is not None:
        raise converter.error(offset, "OFFSET is not supported", UnsupportedSqlError)
    if order is None and limit is None:
        return node
    count = limit.expression if isinstance(limit, exp.Limit) else limit.args.get("count") if limit else None
    if limit is not None and not (isinstance(count, exp.Literal) and count.is_int and int(count.this) > 0):
        raise converter.error(limit, "LIMIT takes a positive whole number here", UnsupportedSqlError)
    if limit is None and not converter.batch:
        raise converter.error(order, "ORDER BY without LIMIT is not supported in streaming mode (an unbounded result "
                                     "has no end to sort at): add LIMIT N for a Top-N, or run in batch mode",
                              UnsupportedSqlError)
    scope = Scope.of(node, None, converter.position)
    for o in (order or exp.Order()).expressions:
        if not isinstance(o.this, exp.Column):
            raise converter.error(o, "ORDER BY takes columns of the SELECT list here, not expressions",
                                  UnsupportedSqlError)
        if o.this.table or not any(e.name == o.this.name for e in scope.entries):
            raise converter.error(o, f"ORDER BY {o.this.sql(dialect='spark')}: order by a column of the SELECT list "
                                     f"({', '.join(n for n in node.names if not n.startswith('__'))})",
                                  UnsupportedSqlError)
    n = int(count.this) if limit is not None else UNLIMITED
    return Rank(list(node.fields), node, [], sort_keys(scope, order), n, None, emit_final=converter.batch)


def _limit(converter, condition: exp.Expr, name: str) -> tuple[int | None, exp.Expr | None]:
    """The N of ``name <= N`` (or < N, = 1) among the AND-ed conditions, and the other conditions."""
    conjuncts = list(condition.flatten()) if isinstance(condition, exp.And) else [condition]
    limit, rest = None, []
    for c in conjuncts:
        bound = _bound(c, name)
        if bound is not None and limit is None:
            limit = bound
        else:
            rest.append(c)
    remaining = exp.and_(*rest) if rest else None
    return limit, remaining


def _bound(c: exp.Expr, name: str) -> int | None:
    if not isinstance(c, (exp.LTE, exp.LT, exp.EQ)) or not isinstance(c.expression, exp.Literal):
        return None
    if not (isinstance(c.this, exp.Column) and c.this.name == name):
        return None
    n = int(c.expression.this)
    if isinstance(c, exp.EQ):
        return 1 if n == 1 else None
    return n - 1 if isinstance(c, exp.LT) else n


def _mentions(select: exp.Select, name: str) -> bool:
    projected = select.expressions
    if any(isinstance(p, exp.Star) for p in projected):
        return True
    return any(c.name == name for p in projected for c in p.find_all(exp.Column))


# ---------------------------------------------------------------------------------------------
# OVER aggregates
# ---------------------------------------------------------------------------------------------
def has_over(select: exp.Select) -> bool:
    """Whether the SELECT list has an aggregate OVER a window."""
    return any(isinstance(w, exp.Window) for p in select.expressions for w in p.find_all(exp.Window))


def plan_over(converter, select: exp.Select, scope: Scope):
    """The OVER aggregates of ``select`` as one Over node, and the SELECT list with their result columns."""
    windows = [w for p in select.expressions for w in p.find_all(exp.Window)]
    first = windows[0]
    partition = [scope.resolve(c) for c in first.args.get("partition_by") or []]
    frame = _frame(converter, first)
    order = (first.args.get("order") or exp.Order()).expressions
    time = scope.resolve(order[0].this) if len(order) == 1 and not order[0].args.get("desc") else None
    if time is None or time != scope.node.rowtime:
        raise converter.error(first, "OVER windows must be ORDER BY the time attribute, ascending", UnsupportedSqlError)
    types = {f.name: f.type for f in scope.node.fields}
    pre_exprs = [(n, quoted(n)) for n in scope.node.names]
    specs, replacements = [], []
    for i, window in enumerate(windows):
        if window.args.get("partition_by") != first.args.get("partition_by") or _frame(converter, window) != frame:
            raise converter.error(window, "all OVER windows of a query must be the same", UnsupportedSqlError)
        call = window.this
        fn = FUNCTIONS.get(type(call))
        if fn is None:
            raise converter.error(window, f"{call.sql(dialect='spark')} OVER is not supported (COUNT, SUM, MIN, MAX, "
                                          "AVG)", UnsupportedSqlError)
        column = None
        if not isinstance(call.this, exp.Star) and call.this is not None:
            column = scope.field_of(call.this) or f"__o{i}"
            if column == f"__o{i}":
                pre_exprs.append((column, scope.sql(call.this)))
        type_ = types.get(column, "DOUBLE") if column else "BIGINT"
        result = "BIGINT" if fn == "count" else ("BIGINT" if fn == "sum" and is_integral(type_) else type_)
        specs.append(Aggregate(f"__over{i}", fn, column, result, integral=is_integral(type_)))
        replacements.append((window, exp.column(f"__over{i}", quoted=True)))
    pre_fields = list(scope.node.fields) + [Field(n, "DOUBLE") for n, _ in pre_exprs[len(scope.node.fields):]]
    pre = Calc(pre_fields, scope.node, pre_exprs, keeps_rowtime=time) if len(pre_exprs) > len(scope.node.fields) else scope.node
    over = Over(list(scope.node.fields) + [Field(a.name, a.type) for a in specs], pre, partition, time, frame, specs)
    entries = scope.entries + [Entry(None, a.name, a.name) for a in specs]
    projections = [_swap(p, replacements) for p in select.expressions]
    return Scope(over, entries, converter.position), projections


def _frame(converter, window: exp.Window) -> dict:
    spec = window.args.get("spec")
    if spec is None:
        return {"range_us": None}
    kind = (spec.args.get("kind") or "RANGE").upper()
    start, end = spec.args.get("start"), spec.args.get("end")
    if str(end).upper() != "CURRENT ROW":
        raise converter.error(window, "OVER frames must end at CURRENT ROW", UnsupportedSqlError)
    if str(start).upper() == "UNBOUNDED":
        return {"rows": None} if kind == "ROWS" else {"range_us": None}
    if kind == "ROWS":
        return {"rows": int(start.this if isinstance(start, exp.Literal) else start)}
    return {"range_us": interval_micros(start)}


def _swap(expr: exp.Expr, pairs) -> exp.Expr:
    def swap(node):
        for original, replacement in pairs:
            if type(node) is type(original) and node == original:
                return replacement.copy()
        return node
    out = expr.copy().transform(swap)
    if not isinstance(expr, (exp.Alias, exp.Column)) and isinstance(out, exp.Column):
        return exp.alias_(out, "EXPR$0", quoted=True)
    return out
