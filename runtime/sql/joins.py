"""Joins: regular (inner, left, right, full; updating), interval and window joins (any kind; append-only).

The ON condition is split into equality keys (left column = right column), bounds between the two
rowtimes (an interval join), equal window bounds of two window table functions (a window join) and
the rest, which an inner join applies as a filter after the join; outer joins take equality keys only.
Right-side columns whose names the left side has are renamed as Flink does (``id`` -> ``id0``).
"""
from __future__ import annotations

from sqlglot import exp

from runtime.sql import lateral, lookup_joins, windows
from runtime.sql.errors import UnsupportedSqlError
from runtime.sql.logical import Calc, Field, Join, Node, WindowTVF
from runtime.sql.scope import Entry, Scope, quoted
from runtime.sql.tables import interval_micros

KINDS = {"": "inner", "INNER": "inner", "LEFT": "left", "RIGHT": "right", "FULL": "full"}


def plan(converter, left: Scope, join: exp.Join) -> Scope:
    """The scope of ``left JOIN right ON ...``: a regular, interval or window join and the residual filter;
    UnsupportedSqlError for what cannot run with Flink's semantics."""
    if lookup_joins.applies(left, join):
        return lookup_joins.plan(converter, left, join)
    if lateral.applies(join):
        return lateral.plan(converter, left, join)
    side = (join.args.get("side") or "").upper()
    kind = KINDS.get(side or (join.args.get("kind") or "").upper())
    condition, using = join.args.get("on"), join.args.get("using")
    if kind is None or (condition is None and not using):
        raise converter.error(join, "only INNER, LEFT, RIGHT and FULL joins with an ON or USING condition are "
                                    "supported (no cross joins)", UnsupportedSqlError)
    right = converter.relation(join.this)
    window_join = isinstance(left.node, WindowTVF) and isinstance(right.node, WindowTVF)
    if window_join:
        left, right = windows.plain_tvf(converter, left), windows.plain_tvf(converter, right)
    right, renames = renamed(left, right)
    merged_fields = list(left.node.fields) + list(right.node.fields)
    scope = left.merged(right, None, {})
    conjuncts: list[exp.Expr]
    if using:
        conjuncts = [exp.EQ(this=exp.column(u.name, table=_first_qualifier(left)),
                            expression=exp.column(u.name, table=_first_qualifier(right))) for u in using]
    else:
        parts = condition.flatten() if isinstance(condition, exp.And) else [condition]
        conjuncts = [c for c in parts if c is not None]
    keys, times, rest = classify(converter, scope, left, right, conjuncts)
    window = _window_keys(keys) if window_join else None
    interval = _interval(converter, join, left, right, times) if times else None
    if not [k for k in keys if k not in (window or {}).get("pairs", [])]and window is None:
        raise converter.error(join, "a join needs at least one equality between a left and a right column",
                              UnsupportedSqlError)
    if (interval or window) and (left.node.updating or right.node.updating):
        raise converter.error(join, "interval and window joins need append-only inputs", UnsupportedSqlError)
    if rest and kind != "inner":
        raise converter.error(join, "an outer join's ON condition may only have equalities between columns",
                              UnsupportedSqlError)
    left_node, right_node, lkeys, rkeys = aligned_keys(left.node, right.node, keys, window)
    node = Join(merged_fields, left_node, right_node, kind, lkeys, rkeys, interval=interval,
                window=None if window is None else {"left": window["left"], "right": window["right"]},
                emit_final=converter.batch)
    out = Scope(node, scope.entries, converter.position)
    for c in rest:
        out = converter.filter(out, c)
    return out


def renamed(left: Scope, right: Scope) -> tuple[Scope, dict[str, str]]:
    """The right side with the columns the left side also has renamed as Flink does (``id`` -> ``id0``)."""
    taken = set(left.node.names)
    renames = {}
    for name in right.node.names:
        if name in taken:
            n = 0
            while f"{name}{n}" in taken or f"{name}{n}" in right.node.names:
                n += 1
            renames[name] = f"{name}{n}"
        taken.add(renames.get(name, name))
    if not renames:
        return right, renames
    node = right.node
    fields = [Field(renames.get(f.name, f.name), f.type) for f in node.fields]
    calc = Calc(fields, node, [(renames.get(n, n), quoted(n)) for n in node.names],
                keeps_rowtime=renames.get(node.rowtime, node.rowtime) if node.rowtime else None)
    entries = [Entry(e.qualifier, e.name, renames.get(e.field, e.field)) for e in right.entries]
    return Scope(calc, entries, right.position), renames


def _first_qualifier(scope: Scope) -> str | None:
    return next((e.qualifier for e in scope.entries if e.qualifier), None)


def _side_of(scope: Scope, side: Scope, expr: exp.Expr) -> bool:
    fields = set(side.node.names)
    columns = list(expr.find_all(exp.Column))
    return bool(columns) and all(scope.resolve(c) in fields for c in columns)


def classify(converter, scope, left, right, conjuncts):
    """ON's conjuncts as (equality key pairs (left, right), bounds between the two rowtimes, the rest)."""
    keys, times, rest = [], [], []
    for c in conjuncts:
        if isinstance(c, exp.EQ) and isinstance(c.this, exp.Column) and isinstance(c.expression, exp.Column):
            a, b = scope.resolve(c.this), scope.resolve(c.expression)
            if a in left.node.names and b in right.node.names:
                keys.append((a, b))
                continue
            if b in left.node.names and a in right.node.names:
                keys.append((b, a))
                continue
        if _is_time_bound(scope, left, right, c):
            times.append(c)
            continue
        rest.append(c)
    return keys, times, rest


def _is_time_bound(scope, left, right, c) -> bool:
    if not isinstance(c, (exp.Between, exp.GT, exp.GTE, exp.LT, exp.LTE)):
        return False
    fields = {scope.resolve(col) for col in c.find_all(exp.Column)}
    return fields == {left.node.rowtime, right.node.rowtime} and None not in fields


def _interval(converter, join, left, right, conditions) -> dict:
    """Bounds on ``left time - right time`` from BETWEEN or comparisons; UnsupportedSqlError otherwise."""
    lower, upper = None, None
    lt, rt = left.node.rowtime, right.node.rowtime
    scope = left.merged(right, None, {})
    for c in conditions:
        pieces = [(c.this, c.args["low"], ">="), (c.this, c.args["high"], "<=")] if isinstance(c, exp.Between) else \
            [(c.this, c.expression, {exp.GT: ">", exp.GTE: ">=", exp.LT: "<", exp.LTE: "<="}[type(c)])]
        for a, b, op in pieces:
            diff, op = _offset(converter, scope, a, b, op, lt, rt)
            if op in (">=", ">"):
                lower = diff + (1 if op == ">" else 0) if lower is None else max(lower, diff)
            else:
                upper = diff - (1 if op == "<" else 0) if upper is None else min(upper, diff)
    if lower is None or upper is None:
        raise converter.error(join, "an interval join needs both a lower and an upper bound on the time difference",
                              UnsupportedSqlError)
    return {"left_time": lt, "right_time": rt, "lower_us": lower, "upper_us": upper}


def _offset(converter, scope, a, b, op, lt, rt) -> tuple[int, str]:
    """``a OP b`` as ``left time - right time OP' constant`` (microseconds)."""
    def split(e):
        if isinstance(e, exp.Column):
            return scope.resolve(e), 0
        if isinstance(e, (exp.Add, exp.Sub)) and isinstance(e.this, exp.Column):
            sign = 1 if isinstance(e, exp.Add) else -1
            return scope.resolve(e.this), sign * interval_micros(e.expression)
        raise converter.error(e, f"time bound {e.sql(dialect='spark')} is not of the form time [+-] INTERVAL",
                              UnsupportedSqlError)
    (fa, ca), (fb, cb) = split(a), split(b)
    if fa == lt and fb == rt:  # lt + ca OP rt + cb  ->  lt - rt OP cb - ca
        return cb - ca, op
    flipped = {">=": "<=", ">": "<", "<=": ">=", "<": ">"}[op]  # rt + ca OP lt + cb -> lt - rt flipped ca - cb
    return ca - cb, flipped


def _window_keys(keys: list[tuple[str, str]]) -> dict:
    found = {a: b for a, b in keys}
    left = ("window_start", "window_end")
    if not all(k in found for k in left):
        raise UnsupportedSqlError("a join of two window table functions needs L.window_start = R.window_start AND "
                                  "L.window_end = R.window_end")
    return {"left": left, "right": (found["window_start"], found["window_end"]),
            "pairs": [(k, found[k]) for k in left]}


def aligned_keys(left: Node, right: Node, keys, window):
    """Join keys (window bounds apart) with the right side's cast to the left side's types, so both hash alike."""
    pairs = [k for k in keys if k not in (window or {}).get("pairs", [])]
    casts = {b: left.type_of(a) for a, b in pairs if left.type_of(a) != right.type_of(b)}
    if casts:
        fields = [Field(f.name, casts.get(f.name, f.type)) for f in right.fields]
        right = Calc(fields, right, [(n, f"CAST({quoted(n)} AS {casts[n]})" if n in casts else quoted(n))
                                     for n in right.names], keeps_rowtime=right.rowtime)
    return left, right, [a for a, _ in pairs], [b for _, b in pairs]
