"""Name resolution: which field of a plan node a column reference in the SQL text means.

A scope lists, for the node a query reads, each field with the table alias (qualifier) and column
name SQL may call it by. Expressions are rewritten against it into Spark SQL over field names;
an unknown or ambiguous column is an SqlValidationError naming it, with its position.
"""
from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from runtime.sql.errors import SqlValidationError
from runtime.sql.functions import AGGREGATES, to_spark
from runtime.sql.logical import Node


@dataclass
class Entry:
    """A name SQL may use for a field: optional table qualifier, column name, the field it means."""
    qualifier: str | None
    name: str
    field: str


class Scope:
    """The names visible over a plan node (FROM's tables and aliases) and how they map to its fields."""
    def __init__(self, node: Node, entries: list[Entry], position=None):
        self.node = node
        self.entries = entries
        self.position = position  # Statement.position-like callable: offset -> (line, column)
        self.ungrouped: Scope | None = None  # after GROUP BY: the scope before it, to tell why a column is gone

    @classmethod
    def of(cls, node: Node, qualifier: str | None, position=None) -> Scope:
        """A scope naming every field of ``node`` under one qualifier."""
        return cls(node, [Entry(qualifier, f, f) for f in node.names], position)

    def merged(self, other: Scope, node: Node, renames: dict[str, str]) -> Scope:
        """The scope of a join: both sides' entries, the right side's fields renamed as in ``renames``."""
        right = [Entry(e.qualifier, e.name, renames.get(e.field, e.field)) for e in other.entries]
        return Scope(node, self.entries + right, self.position)

    def qualifiers(self) -> set[str]:
        """The table names and aliases in scope."""
        return {e.qualifier for e in self.entries if e.qualifier}

    def resolve(self, column: exp.Column) -> str:
        """The field a column reference means; SqlValidationError (with position) if none or several."""
        name, qualifier = column.name, column.table or None
        found = [e for e in self.entries if e.name == name and (qualifier is None or e.qualifier == qualifier)]
        if not found and qualifier is None:
            found = [e for e in self.entries if e.name.lower() == name.lower()]
        fields = {e.field for e in found}
        if len(fields) == 1:
            return fields.pop()
        shown = f"{qualifier}.{name}" if qualifier else name
        if qualifier is not None and qualifier not in self.qualifiers():
            raise self.error(column, f"table or alias {qualifier!r} is not in the FROM clause "
                                     f"(known: {', '.join(sorted(self.qualifiers())) or 'none'})")
        if not fields and self.ungrouped is not None and resolves(self.ungrouped, column):
            raise self.error(column, f"column {shown!r} must be in GROUP BY or inside an aggregate function")
        if not fields:
            available = ", ".join(dict.fromkeys(e.name for e in self.entries))
            raise self.error(column, f"column {shown!r} not found; available columns: {available}")
        raise self.error(column, f"column {shown!r} is ambiguous: qualify it with a table alias")

    def error(self, node: exp.Expr, message: str) -> SqlValidationError:
        """An SqlValidationError positioned at ``node``."""
        line, column = position_of(node, self.position)
        return SqlValidationError(message, line, column)

    def rewrite(self, expr: exp.Expr, allow_aggregates: bool = False) -> exp.Expr:
        """A copy of ``expr`` with columns replaced by quoted field names."""
        if not allow_aggregates:
            for agg in expr.find_all(exp.AggFunc):
                if type(agg).__name__.upper() in AGGREGATES or isinstance(agg, exp.AggFunc):
                    raise self.error(agg, f"aggregate function {agg.sql(dialect='spark')} is not allowed here")

        def replace(node):
            if isinstance(node, exp.Column) and not isinstance(node.this, exp.Star):
                return exp.column(self.resolve(node), quoted=True)
            return node
        return expr.copy().transform(replace)

    def typed(self, expr: exp.Expr) -> exp.Expr:
        """``expr`` resolved in this scope, computing what Flink computes (runtime.sql.typing.flink_expression)."""
        from runtime.sql.typing import flink_expression

        return flink_expression(self.rewrite(expr), self.types)

    @property
    def types(self) -> dict[str, str]:
        """The type of each field of the node this scope reads."""
        return {f.name: f.type for f in self.node.fields}

    def sql(self, expr: exp.Expr) -> str:
        """Spark SQL of a scalar expression in this scope."""
        return to_spark(self.typed(expr), self.types)

    def field_of(self, expr: exp.Expr) -> str | None:
        """The field ``expr`` is, when it is a plain column reference."""
        return self.resolve(expr) if isinstance(expr, exp.Column) and not isinstance(expr.this, exp.Star) else None


def resolves(scope: Scope, column: exp.Column) -> bool:
    """Whether ``column`` names a field of ``scope``."""
    try:
        scope.resolve(column)
        return True
    except SqlValidationError:
        return False


def position_of(node: exp.Expr, position) -> tuple[int | None, int | None]:
    """Line and column of the first identifier in ``node`` (sqlglot keeps each identifier's offset)."""
    if position is None:
        return None, None
    for ident in [node, *node.find_all(exp.Identifier)] if isinstance(node, exp.Identifier) else node.find_all(exp.Identifier):
        start = ident.meta.get("start") if ident.meta else None
        if start is not None:
            return position(start - (1 if ident.args.get("quoted") else 0))
    return None, None


def quoted(name: str) -> str:
    """A field name as a Spark SQL identifier (backquoted, inner backquotes doubled)."""
    return "`" + name.replace("`", "``") + "`"
