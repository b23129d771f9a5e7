"""OVER aggregates: ``agg(x) OVER (PARTITION BY k ORDER BY rowtime [ROWS|RANGE BETWEEN ... PRECEDING AND
CURRENT ROW])``, or ``OVER w`` with ``WINDOW w AS (...)``; append-only, each row emitted once the watermark
passes its time.

COUNT, SUM, MIN, MAX and AVG, and LAG, FIRST_VALUE and LAST_VALUE, which Flink computes as aggregates over the
same frame (LAG(x, n, default): the value n rows before the current one in the frame); LEAD is refused, as
Flink refuses it in streaming mode. Every OVER
of a query must use one window, as Flink requires; without a frame it is RANGE UNBOUNDED PRECEDING.
"""
from __future__ import annotations

from sqlglot import exp

from runtime.sql.aggregates import FUNCTIONS, in_subquery, replace_nodes
from runtime.sql.arithmetic import aggregate_type
from runtime.sql.errors import UnsupportedSqlError
from runtime.sql.logical import Aggregate, Calc, Field, Over
from runtime.sql.scope import Entry, Scope, quoted
from runtime.sql.tables import interval_micros
from runtime.sql.typing import infer_type, is_integral

VALUE_FUNCTIONS = {exp.Lag: "lag", exp.Lead: "lead", exp.FirstValue: "first_value", exp.LastValue: "last_value"}


def has_over(select: exp.Select) -> bool:
    """Whether the SELECT list has an aggregate OVER a window."""
    return bool(_windows(select))


def _windows(select: exp.Select) -> list[exp.Window]:
    return [w for p in select.expressions for w in p.find_all(exp.Window) if not in_subquery(w, p)]


def plan(converter, select: exp.Select, scope: Scope):
    """The OVER aggregates of ``select`` as one Over node, and the SELECT list with their result columns."""
    named = {w.this.name: w for w in select.args.get("windows") or []}
    windows = _windows(select)
    definitions = [_definition(converter, w, named) for w in windows]
    first = definitions[0]
    partition = [scope.resolve(c) for c in first.args.get("partition_by") or []]
    time = _time(converter, scope, first)
    frame = _frame(converter, first)
    pre_exprs = [(n, quoted(n)) for n in scope.node.names]
    pre_fields = list(scope.node.fields)
    specs, replacements = [], []
    for i, (window, definition) in enumerate(zip(windows, definitions)):
        if _shape(definition) != _shape(first) or _frame(converter, definition) != frame:
            raise converter.error(window, "all OVER windows of a query must be the same (Flink computes them in one "
                                          "over aggregation)", UnsupportedSqlError)
        spec, computed = _spec(converter, scope, window.this, i)
        if computed is not None:
            pre_exprs.append((spec.column, scope.sql(computed)))
            pre_fields.append(Field(spec.column, infer_type(scope.typed(computed), scope.types)))
        specs.append(spec)
        replacements.append((window, exp.column(spec.name, quoted=True)))
    pre = Calc(pre_fields, scope.node, pre_exprs, keeps_rowtime=time) if len(pre_exprs) > len(scope.node.fields) \
        else scope.node
    over = Over(list(scope.node.fields) + [Field(a.name, a.type) for a in specs], pre, partition, time, frame, specs)
    entries = scope.entries + [Entry(None, a.name, a.name) for a in specs]
    projections = [_swap(p, replacements) for p in select.expressions]
    return Scope(over, entries, converter.position), projections


def _definition(converter, window: exp.Window, named: dict[str, exp.Window]) -> exp.Window:
    """The window a call is OVER: its own, or the named one of the WINDOW clause."""
    alias = window.args.get("alias")
    if alias is None or window.args.get("partition_by") or window.args.get("order"):
        return window
    found = named.get(alias.name)
    if found is None:
        raise converter.error(window, f"window {alias.name!r} is not defined in a WINDOW clause")
    return found


def _shape(window: exp.Window) -> tuple:
    return (tuple(window.args.get("partition_by") or []), window.args.get("order"))


def _time(converter, scope: Scope, window: exp.Window) -> str:
    order = (window.args.get("order") or exp.Order()).expressions
    time = scope.resolve(order[0].this) if len(order) == 1 and not order[0].args.get("desc") else None
    if time is None or time != scope.node.rowtime:
        raise converter.error(window, "OVER windows must be ORDER BY the time attribute, ascending", UnsupportedSqlError)
    return time


def _spec(converter, scope: Scope, call: exp.Expr, i: int) -> tuple[Aggregate, exp.Expr | None]:
    """The aggregate of one OVER call, and the expression of its argument when that is not a plain column."""
    fn = FUNCTIONS.get(type(call)) or VALUE_FUNCTIONS.get(type(call))
    if fn is None:
        raise converter.error(call, f"{call.sql(dialect='spark').split('(')[0]} OVER is not supported (COUNT, SUM, MIN, "
                                    "MAX, AVG, LAG, LEAD, FIRST_VALUE, LAST_VALUE)", UnsupportedSqlError)
    if fn == "lead":
        raise converter.error(call, "LEAD is not supported: an OVER row is emitted once the watermark passes it, "
                                    "before the rows after it exist (Flink refuses it in streaming mode too)",
                              UnsupportedSqlError)
    if isinstance(call.this, exp.Distinct):
        raise converter.error(call, "DISTINCT aggregates OVER a window are not supported", UnsupportedSqlError)
    arg = None if isinstance(call.this, exp.Star) else call.this
    column = scope.field_of(arg) if arg is not None else None
    computed = arg if arg is not None and column is None else None
    column = f"__o{i}" if computed is not None else column
    type_ = infer_type(scope.typed(arg), scope.types) if arg is not None else "BIGINT"
    args: tuple = ()
    if fn in ("lag", "lead"):
        args = (_constant(converter, call.args.get("offset"), 1), _constant(converter, call.args.get("default"), None))
    result = type_ if fn in VALUE_FUNCTIONS.values() else aggregate_type(fn, type_)
    return Aggregate(f"__over{i}", fn, column, result, integral=is_integral(type_), args=args), computed


def _constant(converter, node: exp.Expr | None, default):
    if node is None:
        return default
    if isinstance(node, exp.Neg):
        return -_constant(converter, node.this, default)
    if isinstance(node, exp.Literal):
        return node.this if node.is_string else (float(node.this) if "." in node.this else int(node.this))
    if isinstance(node, exp.Null):
        return None
    raise converter.error(node, f"LAG and LEAD take a constant here, not {node.sql(dialect='spark')}",
                          UnsupportedSqlError)


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
    out = replace_nodes(expr, pairs)
    if not isinstance(expr, (exp.Alias, exp.Column)) and isinstance(out, exp.Column):
        return exp.alias_(out, "EXPR$0", quoted=True)
    return out
