"""Calls of a statement checked against the function registry (runtime.sql.builtins) and rendered through it.

The planner asks the registry about every function call of a statement before planning it (:func:`check`), so
a function it cannot run with Flink's meaning is refused by name, and :func:`to_spark` renders an expression
through it, telling rewrites their arguments' types (runtime.sql.typing) as the expression was written.
"""
from __future__ import annotations

from collections.abc import Iterable
from contextvars import ContextVar

import sqlglot
from sqlglot import exp

from runtime.sql.builtins import key_of, name_of, registry
from runtime.sql.function_defs import ARG_TYPES, SAME
from runtime.sql.typing import type_of

AGGREGATES = {"COUNT", "SUM", "MIN", "MAX", "AVG"}
_COLUMNS: ContextVar[dict[str, str] | None] = ContextVar("columns", default=None)
_WRITTEN: ContextVar[dict[int, exp.Expr] | None] = ContextVar("written", default=None)  # rendered node -> as written


def check(ast: exp.Expr, user_functions: Iterable[str], error) -> None:
    """Refuse, by name, the first call of ``ast`` to a function the registry does not run (``error(node,
    message)`` makes the positioned error). Python functions registered under ``user_functions`` are allowed;
    aggregates and OVER functions are the aggregation and OVER planners' to check, window table functions in
    FROM and MATCH_RECOGNIZE's clauses where they are planned."""
    users = {u.lower() for u in user_functions}
    found_in = registry()

    def refuse(node: exp.Expr, message: str):
        anchor = node  # errors point at the call, or at the nearest enclosing node naming a column
        while anchor.parent is not None and not any(True for _ in anchor.find_all(exp.Identifier)):
            anchor = anchor.parent
        return error(anchor, message)
    for node in ast.walk():
        if not isinstance(node, exp.Func) and key_of(node) not in found_in.by_node:
            continue
        if _planned_elsewhere(node) or (isinstance(node, exp.Anonymous) and node.name.lower() in users):
            continue
        found = found_in.of(node)
        if found is None and not isinstance(node, exp.Func):
            continue  # syntax of the language itself
        if found is None:
            raise refuse(node, f"function {name_of(node)} is not supported (docs/sql-functions.md lists what is)")
        if not found.supported:
            raise refuse(node, f"function {found.name} is not supported" + (f": {found.note}" if found.note else ""))


# what sqlglot's parser wraps arguments in (YEAR(ts) reads the date of ts): not calls the query wrote
SQLGLOT_WRAPPERS = (exp.TsOrDsToDate, exp.TimeStrToTime, exp.TsOrDsToTimestamp)


def _planned_elsewhere(node: exp.Expr) -> bool:
    if isinstance(node, (exp.AggFunc, exp.Window, *SQLGLOT_WRAPPERS)) or isinstance(node.parent, exp.Window):
        return True
    if isinstance(node, exp.Unnest) and isinstance(node.parent, (exp.Join, exp.From)):
        return True  # array expansion in FROM: runtime.sql.unnest
    if _lateral_table_call(node):
        return True  # a table function's call: runtime.sql.lateral resolves it
    return node.find_ancestor(exp.Table, exp.MatchRecognize) is not None


def _lateral_table_call(node: exp.Expr) -> bool:
    """``LATERAL TABLE(f(...))``: the TABLE wrapper the dialect parses it into, or the call ``f`` inside it."""
    if not isinstance(node, exp.Anonymous):
        return False
    wrapper = node if isinstance(node.parent, exp.Lateral) else node.parent
    return isinstance(wrapper, exp.Anonymous) and wrapper.name.upper() == "TABLE" and isinstance(wrapper.parent, exp.Lateral)


def translate(node: exp.Expr) -> exp.Expr:
    """A copy of ``node`` with each call rendered as the registry says (unknown calls left as they are),
    arguments before the calls that take them. A rewrite asking an argument's type (:func:`arg_type`) is told
    the type of the argument as written, not of its rendering (``EXTRACT(SECOND FROM ts) / 15`` divides two
    integers although its left side is rendered as Spark's ``second(ts)``)."""
    root = node.copy()
    working = list(root.walk())
    written = {id(w): n for w, n in zip(working, node.walk())}
    token = _WRITTEN.set(written)
    try:
        for n in working[::-1]:
            parent, key, index = n.parent, n.arg_key, n.index  # before a rewrite wraps n in a node of its own
            new = _rendered(n)
            if new is not n:
                working.append(new)  # kept alive, so that no later node takes its id
                written[id(new)] = written.get(id(n), n)
                if parent is None:
                    root = new
                else:
                    parent.set(key, new, index)
    finally:
        _WRITTEN.reset(token)
    return root


def _rendered(n: exp.Expr) -> exp.Expr:
    found = registry().of(n) if isinstance(n, exp.Func) or key_of(n) in registry().by_node else None
    if found is None or found.spark in (None, SAME):
        return n
    if isinstance(found.spark, str):
        args = [a for a in [n.this, *n.expressions] if isinstance(a, exp.Expr)] if isinstance(n, exp.Anonymous) \
            else [v for v in n.args.values() if isinstance(v, exp.Expr)]
        return sqlglot.parse_one(found.spark.format(*[a.sql(dialect="spark") for a in args]), read="spark")
    return found.spark(n)


def to_spark(node: exp.Expr, columns: dict[str, str] | None = None) -> str:
    """Spark SQL text of a (resolved) Flink expression; ``columns`` (field -> Spark type) lets rewrites that
    depend on an argument's type (CEIL of a DOUBLE stays a DOUBLE) see it."""
    columns_token, typing_token = _COLUMNS.set(columns), ARG_TYPES.set(_arg_type)
    try:
        return translate(node).sql(dialect="spark")
    finally:
        ARG_TYPES.reset(typing_token)
        _COLUMNS.reset(columns_token)


def _arg_type(node: exp.Expr) -> str | None:
    """A rewrite's argument typed by Flink's rules (runtime.sql.typing) as it was written, when the columns it
    reads are known."""
    columns = _COLUMNS.get()
    if columns is None:
        return None
    return type_of((_WRITTEN.get() or {}).get(id(node), node), columns)
