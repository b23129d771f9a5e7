"""ROW_NUMBER() for Top-N and deduplication, and ORDER BY ... LIMIT (OVER aggregates: runtime.sql.over).

Top-N is Flink's pattern: ``SELECT ... FROM (SELECT ..., ROW_NUMBER() OVER (PARTITION BY k ORDER BY c
DESC) AS rn FROM t) WHERE rn <= N`` (``rn = 1`` with ORDER BY a time column is deduplication).
"""
from __future__ import annotations

from sqlglot import exp

from runtime.sql.errors import UnsupportedSqlError
from runtime.sql.logical import UNLIMITED, Field, Rank, Sort
from runtime.sql.scope import Entry, Scope


RANK_FUNCTIONS = {exp.RowNumber: "row_number", exp.Rank: "rank", exp.DenseRank: "dense_rank"}


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
                and type(p.this.this) in RANK_FUNCTIONS]
    if not numbered:
        return None
    number = numbered[0]
    function = RANK_FUNCTIONS[type(number.this.this)]
    (start, limit), rest = _limit(converter, where.this, number.alias)
    if limit is None:
        raise converter.error(number, f"{function.upper()}() is supported for Top-N only: filter it with "
                                      f"WHERE {number.alias} <= N (or = 1, or BETWEEN a AND b)", UnsupportedSqlError)
    base = inner.copy()
    window = number.this.copy()
    base.set("expressions", [p for p in inner.expressions if p is not number] + _hidden_columns(inner, window))
    node = converter.select(base)
    scope = Scope.of(node, None, converter.position)
    partition = [scope.resolve(c) for c in window.args.get("partition_by") or []]
    order = sort_keys(scope, window.args.get("order"))
    if not order:
        raise converter.error(number, "ROW_NUMBER() needs ORDER BY", UnsupportedSqlError)
    keep_number = _mentions(select, number.alias)
    fields = list(node.fields) + ([Field(number.alias, "BIGINT")] if keep_number else [])
    rank = Rank(fields, node, partition, order, limit, number.alias if keep_number else None,
                emit_final=converter.batch, start=start, function=function)
    alias = source.this.alias or None
    return Scope(rank, [Entry(alias, f.name, f.name) for f in fields], converter.position), rest


def _hidden_columns(inner: exp.Select, window: exp.Window) -> list[exp.Expr]:
    """Columns the ranking's PARTITION BY and ORDER BY read that the inner SELECT list does not give: selected
    under hidden names (``__rank<i>``, never shown), and ``window`` changed to read those."""
    if any(isinstance(p, exp.Star) or (isinstance(p, exp.Column) and isinstance(p.this, exp.Star))
           for p in inner.expressions):
        return []
    given = {p.alias_or_name for p in inner.expressions}
    hidden: list[exp.Expr] = []
    for column in list(window.find_all(exp.Column)):
        if column.name not in given:
            name = f"__rank{len(hidden)}"
            hidden.append(exp.alias_(column.copy(), name, quoted=True))
            column.replace(exp.column(name, quoted=True))
    return hidden


def sort_keys(scope: Scope, order: exp.Order | None) -> list[tuple[str, bool, bool]]:
    """ORDER BY as (field, ascending, nulls first); NULLs first when ascending unless said otherwise, as in Flink."""
    keys = []
    for o in (order or exp.Order()).expressions:
        ascending = not o.args.get("desc")
        nulls_first = o.args.get("nulls_first")
        keys.append((scope.resolve(o.this), ascending, ascending if nulls_first is None else bool(nulls_first)))
    return keys


def order_limit(converter, select: exp.Select, node):
    """``ORDER BY ... LIMIT n [OFFSET m]`` (and ``LIMIT n`` alone) as a Top-N over the whole result, ranks m + 1 to
    m + n; ORDER BY without LIMIT in batch mode as a sort of it. A streaming result without LIMIT has no order to
    keep: refused by name."""
    order, limit, offset = (select.args.get(c) for c in ("order", "limit", "offset"))
    if order is None and limit is None and offset is None:
        return node
    count = limit.expression if isinstance(limit, exp.Limit) else limit.args.get("count") if limit else None
    if limit is not None and not (_whole(count) and int(count.this) > 0):
        raise converter.error(limit, "LIMIT takes a positive whole number here", UnsupportedSqlError)
    skip = offset.expression if offset is not None else None
    if offset is not None and not _whole(skip):
        raise converter.error(offset, "OFFSET takes a whole number here", UnsupportedSqlError)
    scope = Scope.of(node, None, converter.position)
    if limit is None and offset is None and not converter.batch and _by_time(scope, order):
        return Sort(list(node.fields), node, sort_keys(scope, order))
    if limit is None and not converter.batch:
        raise converter.error(order or offset, "ORDER BY or OFFSET without LIMIT is not supported in streaming mode "
                                               "unless ordered by the time attribute first, ascending (an unbounded "
                                               "result has no end to sort at): add LIMIT N for a Top-N, or run in "
                                               "batch mode", UnsupportedSqlError)
    for o in (order or exp.Order()).expressions:
        if not isinstance(o.this, exp.Column):
            raise converter.error(o, "ORDER BY takes columns of the SELECT list here, not expressions",
                                  UnsupportedSqlError)
        if o.this.table or not any(e.name == o.this.name for e in scope.entries):
            raise converter.error(o, f"ORDER BY {o.this.sql(dialect='spark')}: order by a column of the SELECT list "
                                     f"({', '.join(n for n in node.names if not n.startswith('__'))})",
                                  UnsupportedSqlError)
    first = int(skip.this) + 1 if skip is not None else 1
    last = first - 1 + int(count.this) if limit is not None else UNLIMITED
    return Rank(list(node.fields), node, [], sort_keys(scope, order), last, None, emit_final=converter.batch,
                start=first)


def _by_time(scope: Scope, order: exp.Order | None) -> bool:
    """Whether ORDER BY starts with the time attribute, ascending (Flink's temporal sort)."""
    first = (order or exp.Order()).expressions[:1]
    return bool(first) and scope.node.rowtime is not None and isinstance(first[0].this, exp.Column) \
        and not first[0].args.get("desc") and scope.field_of(first[0].this) == scope.node.rowtime


def _limit(converter, condition: exp.Expr, name: str) -> tuple[tuple[int, int | None], exp.Expr | None]:
    """The ranks (first, last) ``name`` is filtered to among the AND-ed conditions (``<= N``, ``< N``, ``= k``,
    ``BETWEEN a AND b``, ``>= a``), and the other conditions."""
    conjuncts = list(condition.flatten()) if isinstance(condition, exp.And) else [condition]
    start, limit, rest = 1, None, []
    for c in conjuncts:
        bounds = _bounds(c, name)
        if bounds is None:
            rest.append(c)
            continue
        low, high = bounds
        start = max(start, low)
        limit = high if limit is None or high is None else min(limit, high) if high else limit
    remaining = exp.and_(*rest) if rest else None
    return (start, limit), remaining


def _bounds(c: exp.Expr, name: str) -> tuple[int, int | None] | None:
    """(first, last or None) ranks of one condition on the rank column, or None if it is not one."""
    if isinstance(c, exp.Between) and _is(c.this, name) and _whole(c.args["low"]) and _whole(c.args["high"]):
        return int(c.args["low"].this), int(c.args["high"].this)
    if not isinstance(c, (exp.LTE, exp.LT, exp.EQ, exp.GTE, exp.GT)) or not _is(c.this, name) \
            or not _whole(c.expression):
        return None
    n = int(c.expression.this)
    return {exp.LTE: (1, n), exp.LT: (1, n - 1), exp.EQ: (n, n), exp.GTE: (n, None), exp.GT: (n + 1, None)}[type(c)]


def _is(node: exp.Expr, name: str) -> bool:
    return isinstance(node, exp.Column) and node.name == name


def _whole(node: exp.Expr) -> bool:
    return isinstance(node, exp.Literal) and node.is_int


def _mentions(select: exp.Select, name: str) -> bool:
    projected = select.expressions
    if any(isinstance(p, exp.Star) for p in projected):
        return True
    return any(c.name == name for p in projected for c in p.find_all(exp.Column))
