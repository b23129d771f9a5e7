"""The function registry: every function of Flink's "System (Built-in) Functions" page, by category.

Each :class:`Function` says how Flink writes it, which Spark expression computes it (``SAME``: sqlglot's
Spark rendering of the parsed call already is Flink's function; a template over the call's arguments; a
rewrite of the call; or None: not supported, with why) and its result type. The planner asks the registry
about every function call of a statement before planning it (:func:`check`), so a function it cannot run
with Flink's meaning is refused by name, and :func:`to_spark` renders an expression through it. The
functions themselves are listed by category in runtime.sql.builtins; docs/sql-functions.md is generated
from here (scripts/gen_function_docs.py) and a test keeps the two equal.
"""
from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import sqlglot
from sqlglot import exp


SAME = "same"  # sqlglot's Spark rendering of the parsed call is Flink's function
AGGREGATES = {"COUNT", "SUM", "MIN", "MAX", "AVG"}
_COLUMNS: ContextVar[dict[str, str] | None] = ContextVar("columns", default=None)
_WRITTEN: ContextVar[dict[int, exp.Expr] | None] = ContextVar("written", default=None)  # rendered node -> as written
CATEGORIES = ("comparison", "logical", "arithmetic", "string", "temporal", "conditional", "type conversion",
              "collection", "JSON", "value construction", "value access", "grouping", "hash", "aggregate", "catalog")


@dataclass(frozen=True)
class Function:
    """One function (or operator) of Flink's page: how it is written and how it runs on Spark.

    ``spark``: SAME, a template (``"sha2({0}, 256)"``: the call's arguments by position), a rewrite
    (``node -> expression``) or None (not supported: ``note`` says why). ``result``: the result type (a
    Spark type, or ``arg0``: the first argument's). ``example``: a call over the conformance columns; parsed,
    it also tells which parsed node is this function. ``matches``: for functions that parse into the same
    node as another (FLOOR(x) and FLOOR(ts TO unit)), which of those nodes are this one."""
    name: str
    syntax: str
    example: str
    spark: Any
    result: str
    note: str = ""
    matches: Callable[[exp.Expr], bool] | None = None
    category: str = ""

    @property
    def supported(self) -> bool:
        """Whether the planner runs it (with Flink's meaning)."""
        return self.spark is not None

    def how(self) -> str:
        """How it runs, in one line of the docs table."""
        if self.spark is None:
            return f"not supported: {self.note}" if self.note else "not supported"
        if self.spark == SAME:
            text = "Spark's own" + (f" ({self.note})" if self.note else "")
        elif isinstance(self.spark, str):
            text = f"`{self.spark.format(*[f'x{i + 1}' for i in range(4)])}`" + (f" ({self.note})" if self.note else "")
        else:
            text = (self.spark.__doc__ or "rewritten").strip().splitlines()[0]
        return text


def category(name: str, functions: Iterable[Function]) -> list[Function]:
    """``functions`` filed under category ``name``."""
    return [Function(**{**f.__dict__, "category": name}) for f in functions]


class Registry:
    """The functions by name, and the parsed nodes each one's calls become."""

    def __init__(self, functions: list[Function]):
        from runtime.sql.dialect import Flink

        self.functions = functions
        self.by_name = {f.name: f for f in functions}
        self.by_node: dict = {}
        for f in functions:
            if f.example is not None:
                node = sqlglot.parse_one(f.example, read=Flink)
                if not isinstance(node, STRUCTURAL):
                    self.by_node.setdefault(_key(node), []).append(f)
            elif f.name.replace("_", "").isalnum():  # a function refused by name alone
                self.by_node.setdefault(f.name, []).append(f)

    def of(self, node: exp.Expr) -> Function | None:
        """The registry's entry for a parsed call (or operator), or None."""
        for f in self.by_node.get(_key(node), []):
            if f.matches is None or f.matches(node):
                return f
        return None


STRUCTURAL = (exp.Column, exp.Literal, exp.Identifier, exp.Star)


def _key(node: exp.Expr):
    return node.name.upper() if isinstance(node, exp.Anonymous) else type(node)


@functools.cache
def registry() -> Registry:
    """The registry of every built-in function (built once)."""
    from runtime.sql.builtins import FUNCTIONS

    return Registry(FUNCTIONS)


def name_of(node: exp.Func) -> str:
    """How an error names a call: its function's name as the registry or the SQL text has it."""
    found = registry().of(node)
    if found is not None:
        return found.name
    return node.name.upper() if isinstance(node, exp.Anonymous) else node.sql_name()


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
        if not isinstance(node, exp.Func) and _key(node) not in found_in.by_node:
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
    return node.find_ancestor(exp.Table, exp.MatchRecognize) is not None


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
    found = registry().of(n) if isinstance(n, exp.Func) or _key(n) in registry().by_node else None
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
    token = _COLUMNS.set(columns)
    try:
        return translate(node).sql(dialect="spark")
    finally:
        _COLUMNS.reset(token)


def arg_type(node: exp.Expr) -> str | None:
    """The Spark type of an argument of the call being rendered, by Flink's rules (runtime.sql.typing), when the
    columns it reads are known."""
    columns = _COLUMNS.get()
    if columns is None:
        return None
    from runtime.sql.typing import type_of

    return type_of((_WRITTEN.get() or {}).get(id(node), node), columns)


def call(name: str, *args: exp.Expr) -> exp.Expr:
    """A Spark function call ``name(args)``."""
    return exp.Anonymous(this=name, expressions=list(args))


def cast(node: exp.Expr, type_: str) -> exp.Expr:
    """``CAST(node AS type_)`` (a Spark type)."""
    return exp.Cast(this=node, to=exp.DataType.build(type_, dialect="spark"))


def result_type(node: exp.Expr) -> str | None:
    """The registry's result type of a call when it is a fixed type (None: it depends on the arguments)."""
    found = registry().of(node) if isinstance(node, exp.Func) else None
    if found is None or found.result.startswith("arg") or found.result in ("-", "TIME", "INTERVAL"):
        return None
    return found.result


def builtin_names() -> list[str]:
    """SHOW FUNCTIONS: the supported functions that are called by name (operators and syntax left out)."""
    return sorted(f.name for f in registry().functions if f.supported and f.name.replace("_", "").isalnum())
