"""GROUP BY and aggregate functions: windowed (over a window TVF) or updating (non-windowed).

Plan: a Calc computes the group keys and the aggregates' arguments, then a WindowAggregate (the
window operator, fired by watermarks; append-only) or a GroupAggregate (keyed accumulators; a
changelog of +I/-U/+U/-D), then HAVING and the SELECT list over keys and aggregate results.
"""
from __future__ import annotations

from sqlglot import exp

from runtime.sql import grouping_sets, statistics
from runtime.sql.arithmetic import aggregate_type
from runtime.sql.errors import UnsupportedSqlError
from runtime.sql.logical import Aggregate, Calc, Field, GroupAggregate, WindowAggregate, WindowTVF
from runtime.sql.scope import Entry, Scope, quoted
from runtime.sql.typing import infer_type, is_integral
from runtime.sql.user_functions import UserAggregate, by_spark_name

FUNCTIONS = {exp.Count: "count", exp.Sum: "sum", exp.Min: "min", exp.Max: "max", exp.Avg: "avg"}
WINDOW_KEYS = ("window_start", "window_end")
WINDOW_FIELDS = WINDOW_KEYS + ("window_time",)


def has_aggregation(select: exp.Select) -> bool:
    """Whether ``select`` aggregates: GROUP BY, HAVING or an aggregate call outside OVER."""
    if select.args.get("group") is not None or select.args.get("having") is not None:
        return True
    return any(_aggregate_calls(e) for e in select.expressions)


def _aggregate_calls(expr: exp.Expr) -> list[exp.Expr]:
    """The aggregate calls of ``expr`` outside OVER; one with a FILTER clause as its Filter node."""
    calls = [a for a in expr.find_all(exp.AggFunc) if not isinstance(a, (exp.Grouping, exp.GroupingId))
             and not isinstance(a.parent, exp.Window)
             and not a.find_ancestor(exp.Window) and not in_subquery(a, expr)]
    return [a.parent if isinstance(a.parent, exp.Filter) else a for a in calls]


def in_subquery(node: exp.Expr, top: exp.Expr) -> bool:
    """Whether ``node`` lies in a subquery nested in ``top`` (its aggregates are that query's own)."""
    if node is top:
        return False
    parent = node.parent
    while parent is not None and parent is not top:
        if isinstance(parent, (exp.Subquery, exp.Exists, exp.Select)):
            return True
        parent = parent.parent
    return False


def plan(converter, select: exp.Select, scope: Scope) -> tuple[Scope, list[exp.Expr]]:
    """The aggregation of ``select`` over ``scope``: the scope after it and the SELECT list to project."""
    select = statistics.reduced(converter, select, scope)
    group_exprs, sets = grouping_sets.grouping(converter, select.args.get("group"))
    having = select.args.get("having")
    nested = [e for e in select.expressions + ([having.this] if having is not None else [])
              if any(True for _ in e.find_all(exp.Subquery, exp.Exists))]
    if nested:
        raise converter.error(nested[0], "subqueries in the SELECT list or HAVING of an aggregation are not "
                                         "supported (in WHERE they are)", UnsupportedSqlError)
    calls = [c for e in select.expressions + ([having.this] if having is not None else []) for c in _aggregate_calls(e)]
    windowed = isinstance(scope.node, WindowTVF)
    source = scope
    if windowed:
        group_exprs, sets = _without_window_keys(converter, select, group_exprs, sets)
        source = Scope(scope.node.input, [e for e in scope.entries if e.name not in ("window_start", "window_end",
                                                                                       "window_time")], scope.position)
    if not windowed:
        _refuse_unbounded_pandas(converter, calls, updating=source.node.updating)
    pre, keys, specs = _pre_projection(converter, source, group_exprs, calls, windowed)
    grouped = list(keys)
    if sets is not None:
        pre = grouping_sets.expand(pre, keys, sets)
        keys = keys + [grouping_sets.GROUPING_ID]
    if not keys:  # a global aggregate: one key for all rows
        pre.exprs.append(("__global", "0"))
        pre.fields.append(Field("__global", "INT"))
        keys = ["__global"]
    if windowed:
        node = _window_aggregate(converter, scope.node, pre, keys, specs, _groups_window_time(select))
    else:
        fields = [Field(k, pre.type_of(k)) for k in keys] + [Field(a.name, a.type) for a in specs]
        node = GroupAggregate(fields, pre, keys, specs, emit_final=converter.batch)
    post = _post_scope(source, node, keys, windowed)
    replacements = _replacements(group_exprs, grouped, calls, specs)
    for e in select.expressions + ([having.this] if having is not None else []):
        replacements += _grouping_replacements(converter, e, group_exprs, grouped, sets)
    projections = [_named(e, replace_nodes(e, replacements), i) for i, e in enumerate(select.expressions)]
    if having is not None:
        post = converter.filter(post, replace_nodes(having.this, replacements))
    return post, projections


def _groups_window_time(select: exp.Select) -> bool:
    group = select.args.get("group")
    return group is not None and any(isinstance(g, exp.Column) and g.name == "window_time" for g in group.expressions)


def _without_window_keys(converter, select, group_exprs: list[exp.Expr], sets):
    """GROUP BY of a window aggregate: window_start and window_end (and window_time) are its window, not keys."""
    window_keys = [i for i, g in enumerate(group_exprs)
                   if isinstance(g, exp.Column) and g.name in WINDOW_KEYS + ("window_time",)]
    if {group_exprs[i].name for i in window_keys} < set(WINDOW_KEYS):
        raise converter.error(select, "GROUP BY over a window table function must include window_start and "
                                      "window_end", UnsupportedSqlError)
    kept = [i for i in range(len(group_exprs)) if i not in window_keys]
    if sets is not None:
        sets = [[kept.index(i) for i in members if i in kept] for members in sets]
    return [group_exprs[i] for i in kept], sets


def _grouping_replacements(converter, expr, group_exprs, keys, sets) -> list[tuple[exp.Expr, exp.Expr]]:
    calls = list(expr.find_all(exp.Grouping, exp.GroupingId))
    if not calls:
        return []
    if sets is None:  # a plain GROUP BY: every key is in the one set
        return [(c, exp.cast(exp.Literal.number(0), "BIGINT")) for c in calls]
    try:
        return grouping_sets.grouping_calls(expr, group_exprs, keys)
    except ValueError as err:
        raise converter.error(calls[0], str(err)) from None


def _pre_projection(converter, source: Scope, group_exprs, calls, windowed: bool):
    types = {f.name: f.type for f in source.node.fields}
    exprs: list[tuple[str, str]] = []
    fields: list[Field] = []
    keys: list[str] = []

    def add(name: str, sql: str, type_: str) -> str:
        if name not in [n for n, _ in exprs]:
            exprs.append((name, sql))
            fields.append(Field(name, type_))
        return name

    for i, g in enumerate(group_exprs):
        field = source.field_of(g)
        keys.append(add(field, quoted(field), types[field]) if field else
                    add(f"__g{i}", source.sql(g), infer_type(source.typed(g), types)))
    specs: list[Aggregate] = []
    for i, call in enumerate(calls):
        spec = _aggregate_spec(converter, source, call, i, add, types, windowed)
        alias = call.parent.alias if isinstance(call.parent, exp.Alias) and isinstance(call.parent.parent, exp.Select) \
            else None
        taken = {n for n, _ in exprs} | {a.name for a in specs} | set(types)
        if alias and alias not in taken:
            spec.name = alias  # named as the query names it: the SELECT list over it is then no Calc at all
        specs.append(spec)
    if windowed:
        rowtime = source.node.rowtime
        add(rowtime, quoted(rowtime), source.node.type_of(rowtime))
    return Calc(fields, source.node, exprs, keeps_rowtime=source.node.rowtime if windowed else None), keys, specs


def _aggregate_spec(converter, source: Scope, call: exp.Expr, i: int, add, types, windowed: bool) -> Aggregate:
    condition = call.expression.this if isinstance(call, exp.Filter) else None
    call = call.this if isinstance(call, exp.Filter) else call
    if isinstance(call, UserAggregate):
        if condition is not None:
            raise converter.error(call, "FILTER (WHERE ...) on a Python aggregate function is not supported",
                                  UnsupportedSqlError)
        return _user_aggregate(converter, source, call, i, add, types)
    fn = FUNCTIONS.get(type(call))
    if fn is None:
        raise converter.error(call, f"aggregate function {call.sql(dialect='spark').split('(')[0]} is not supported "
                                    "(COUNT, SUM, MIN, MAX, AVG, STDDEV_POP, STDDEV_SAMP, VAR_POP, VAR_SAMP)",
                              UnsupportedSqlError)
    arg = call.this
    distinct = isinstance(arg, exp.Distinct)
    if distinct:
        if len(arg.expressions) != 1 or (fn in ("sum", "avg") and windowed):
            raise converter.error(call, f"{fn.upper()}(DISTINCT ...) is not supported here (COUNT(DISTINCT x) is; SUM "
                                        "and AVG of DISTINCT values outside windows)", UnsupportedSqlError)
        fn, arg = (fn if fn in ("min", "max") else f"{fn}_distinct"), arg.expressions[0]
    if condition is not None:  # agg(x) FILTER (WHERE c) is agg(CASE WHEN c THEN x END); COUNT(*) counts the rows of c
        whole = isinstance(arg, exp.Star) or arg is None
        arg = exp.Case(ifs=[exp.If(this=condition, true=exp.Literal.number(1) if whole else arg)])
    if isinstance(arg, exp.Star) or arg is None:
        return Aggregate(f"__agg{i}", "count", None, "BIGINT")
    field = source.field_of(arg)
    type_ = types[field] if field else infer_type(source.typed(arg), types)
    column = add(field, quoted(field), type_) if field else add(f"__a{i}", source.sql(arg), type_)
    return Aggregate(f"__agg{i}", fn, column, aggregate_type(fn.removesuffix("_distinct"), type_),
                     integral=is_integral(type_))


def _user_aggregate(converter, source: Scope, call: UserAggregate, i: int, add, types) -> Aggregate:
    """A Python aggregate function's call: its arguments computed as input fields (runtime.sql.user_functions)."""
    fdef = by_spark_name(converter.catalog)[call.args["function"].name]
    inputs = []
    for j, arg in enumerate(call.expressions):
        field = source.field_of(arg)
        type_ = types[field] if field else infer_type(source.typed(arg), types)
        inputs.append(add(field, quoted(field), type_) if field else add(f"__a{i}_{j}", source.sql(arg), type_))
    return Aggregate(f"__agg{i}", "udaf", None, fdef.result_type, inputs=inputs, function=fdef.spark_name)


def _refuse_unbounded_pandas(converter, calls: list[exp.AggFunc], updating: bool) -> None:
    """A pandas aggregate function sees all of a group's rows at once: in a window or a batch job, never over an
    unbounded GROUP BY or rows that are retracted (as Flink refuses it there)."""
    for call in calls:
        if not isinstance(call, UserAggregate):
            continue
        fdef = by_spark_name(converter.catalog)[call.args["function"].name]
        if fdef.function.func_type == "pandas" and (updating or not converter.batch):
            raise converter.error(call, f"the pandas aggregate function {fdef.name} needs all of a group's rows at "
                                        "once: use it in a window (TUMBLE, HOP, CUMULATE, SESSION) or in batch mode, "
                                        "over an input that is not updating", UnsupportedSqlError)


def _window_aggregate(converter, tvf: WindowTVF, pre: Calc, keys: list[str], specs: list[Aggregate],
                      window_time: bool):
    """The window aggregate; grouped by window_time too, it gives window_time (the window's end less 1 ms), a time
    attribute windows after it can use, as Flink's does."""
    keys = [k for k in keys if k != tvf.time_column or k in [g for g in keys]]
    fields = [Field(k, pre.type_of(k)) for k in keys] + [Field(n, "TIMESTAMP") for n in WINDOW_KEYS]
    if window_time:
        fields.append(Field("window_time", tvf.type_of("window_time")))
    fields += [Field(a.name, a.type) for a in specs]
    if tvf.window["type"] == "session" and tvf.partition and set(tvf.partition) - set(keys):
        raise converter.error(exp.column(tvf.partition[0]), "a SESSION window's PARTITION BY columns must be "
                                                            "among the GROUP BY keys", UnsupportedSqlError)
    return WindowAggregate(fields, pre, tvf.window, keys, specs, tvf.time_column, emit_final=converter.batch)


def _post_scope(source: Scope, node, keys: list[str], windowed: bool) -> Scope:
    entries = [e for e in source.entries if e.field in keys]
    entries += [Entry(None, k, k) for k in keys]
    entries += [Entry(None, f.name, f.name) for f in node.fields if f.name not in keys and f.name not in WINDOW_FIELDS]
    if windowed:
        entries += [Entry(None, n, n) for n in WINDOW_FIELDS if n in node.names]
    post = Scope(node, entries, source.position)
    post.ungrouped = source
    return post


def _replacements(group_exprs, keys, calls, specs) -> list[tuple[exp.Expr, exp.Expr]]:
    pairs = [(call, _result_column(spec)) for call, spec in zip(calls, specs)]
    pairs += [(g, exp.column(k, quoted=True)) for g, k in zip(group_exprs, keys) if not isinstance(g, exp.Column)]
    return pairs


def _result_column(spec: Aggregate) -> exp.Expr:
    return exp.column(spec.name, quoted=True)


def replace_nodes(expr: exp.Expr, pairs) -> exp.Expr:
    """A copy of ``expr`` with each node equal to an ``original`` of ``pairs`` replaced by its replacement (aggregate
    calls and computed group expressions by their result columns, OVER calls by theirs)."""
    def swap(node):
        for original, replacement in pairs:
            if type(node) is type(original) and node == original:
                return replacement.copy()
        return node
    return expr.copy().transform(swap)


def _named(original: exp.Expr, replaced: exp.Expr, index: int) -> exp.Expr:
    """Keep Flink's name of an unaliased computed column (EXPR$n) once its calls became column references."""
    if isinstance(original, (exp.Alias, exp.Column, exp.Star)):
        return replaced
    return exp.alias_(replaced, f"EXPR${index}", quoted=True)
