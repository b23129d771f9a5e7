"""How one built-in function is described: the entries runtime.sql.builtins lists by category, and the helpers
their rewrites are written with.

Each :class:`Function` says how Flink writes it, which Spark expression computes it (``SAME``: sqlglot's
Spark rendering of the parsed call already is Flink's function; a template over the call's arguments; a
rewrite of the call; or None: not supported, with why) and its result type. A rewrite that depends on an
argument's type asks :func:`arg_type`, which answers with the typing the renderer (runtime.sql.functions)
sets for the call being rendered, so that this module and the lists need nothing of the planner.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from sqlglot import exp

SAME = "same"  # sqlglot's Spark rendering of the parsed call is Flink's function
CATEGORIES = ("comparison", "logical", "arithmetic", "string", "temporal", "conditional", "type conversion",
              "collection", "JSON", "value construction", "value access", "grouping", "hash", "aggregate", "catalog")
ARG_TYPES: ContextVar[Callable[[exp.Expr], str | None] | None] = ContextVar("arg_types", default=None)


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


def arg_type(node: exp.Expr) -> str | None:
    """The Spark type of an argument of the call being rendered, by Flink's rules, when the renderer knows the
    columns it reads (None otherwise)."""
    typing = ARG_TYPES.get()
    return typing(node) if typing is not None else None


def call(name: str, *args: exp.Expr) -> exp.Expr:
    """A Spark function call ``name(args)``."""
    return exp.Anonymous(this=name, expressions=list(args))


def cast(node: exp.Expr, type_: str) -> exp.Expr:
    """``CAST(node AS type_)`` (a Spark type)."""
    return exp.Cast(this=node, to=exp.DataType.build(type_, dialect="spark"))
