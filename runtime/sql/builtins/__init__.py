"""The built-in functions of Flink's "System (Built-in) Functions" page, one module per group of categories, and
the registry that finds the entry of a parsed call: the planner checks calls against it and renders them through
it (runtime.sql.functions), the typing reads fixed result types from it (runtime.sql.typing), and
docs/sql-functions.md is generated from it (scripts/gen_function_docs.py; a test keeps the two equal)."""
from __future__ import annotations

import functools

import sqlglot
from sqlglot import exp

from runtime.sql.builtins import aggregate, arithmetic, collections, comparison, conditional, strings, temporal
from runtime.sql.function_defs import Function

FUNCTIONS = [*comparison.FUNCTIONS, *arithmetic.FUNCTIONS, *strings.FUNCTIONS, *temporal.FUNCTIONS,
             *conditional.FUNCTIONS, *collections.FUNCTIONS, *aggregate.FUNCTIONS]


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
                    self.by_node.setdefault(key_of(node), []).append(f)
            elif f.name.replace("_", "").isalnum():  # a function refused by name alone
                self.by_node.setdefault(f.name, []).append(f)

    def of(self, node: exp.Expr) -> Function | None:
        """The registry's entry for a parsed call (or operator), or None."""
        for f in self.by_node.get(key_of(node), []):
            if f.matches is None or f.matches(node):
                return f
        return None


STRUCTURAL = (exp.Column, exp.Literal, exp.Identifier, exp.Star)


def key_of(node: exp.Expr):
    """What the registry files a parsed call under: an unknown call's name, else its node type."""
    return node.name.upper() if isinstance(node, exp.Anonymous) else type(node)


@functools.cache
def registry() -> Registry:
    """The registry of every built-in function (built once)."""
    return Registry(FUNCTIONS)


def name_of(node: exp.Func) -> str:
    """How an error names a call: its function's name as the registry or the SQL text has it."""
    found = registry().of(node)
    if found is not None:
        return found.name
    return node.name.upper() if isinstance(node, exp.Anonymous) else node.sql_name()


def result_type(node: exp.Expr) -> str | None:
    """The registry's result type of a call when it is a fixed type (None: it depends on the arguments)."""
    found = registry().of(node) if isinstance(node, exp.Func) else None
    if found is None or found.result.startswith("arg") or found.result in ("-", "TIME", "INTERVAL"):
        return None
    return found.result


def builtin_names() -> list[str]:
    """SHOW FUNCTIONS: the supported functions that are called by name (operators and syntax left out)."""
    return sorted(f.name for f in registry().functions if f.supported and f.name.replace("_", "").isalnum())
