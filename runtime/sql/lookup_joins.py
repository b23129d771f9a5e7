"""Processing-time lookup joins: ``JOIN dim FOR SYSTEM_TIME AS OF s.proc_time [AS d] ON s.k = d.id [AND ...]``
where ``dim``'s connector can look rows up (jdbc). Each stream row is joined with the table's rows as they are
when it passes; the table is not read as a stream. Inner and LEFT joins, as in Flink.

The AS OF attribute must be one of the stream's columns other than its event-time attribute: a join AS OF the
rowtime is an event-time temporal join of a versioned table, another planner's (runtime.sql.joins). The
ON condition needs at least one equality between a stream column and a table column; the rest filters
after the join (inner joins only).
"""
from __future__ import annotations

from sqlglot import exp

from runtime.sql import connectors
from runtime.sql.catalog import TableDef
from runtime.sql.errors import UnsupportedSqlError
from runtime.sql.logical import Field, LookupJoin, Scan
from runtime.sql.scope import Entry, Scope

KINDS = {"": "inner", "INNER": "inner", "LEFT": "left"}


def applies(left: Scope, join: exp.Join) -> bool:
    """Whether ``join`` joins a table FOR SYSTEM_TIME AS OF a column that is not the left side's rowtime."""
    table = join.this
    version = table.args.get("version") if isinstance(table, exp.Table) else None
    if version is None or not isinstance(version.expression, exp.Column):
        return False
    try:
        return left.resolve(version.expression) != left.node.rowtime
    except Exception:  # noqa: BLE001 - an unknown column is the general planner's error to raise
        return False


def plan(converter, left: Scope, join: exp.Join) -> Scope:
    """The scope of the lookup join and its residual filter; UnsupportedSqlError for what Flink refuses too."""
    table_node = join.this
    name = ".".join(p.name for p in table_node.parts)
    item = converter.catalog.get(name)
    if not isinstance(item, TableDef) or not connectors.can_look_up(item):
        kind = connectors.connector_of(item) if isinstance(item, TableDef) else "not a table"
        raise converter.error(table_node, f"FOR SYSTEM_TIME AS OF a processing-time attribute needs a lookup table "
                                          f"(connector 'jdbc'); {name!r} is {kind}", UnsupportedSqlError)
    kind = KINDS.get((join.args.get("side") or join.args.get("kind") or "").upper())
    if kind is None or join.args.get("on") is None:
        raise converter.error(join, "a lookup join is an INNER or LEFT join with an ON condition", UnsupportedSqlError)
    taken = set(left.node.names)
    right_fields = []
    for column in item.physical:
        out = column.name if column.name not in taken else _fresh(column.name, taken)
        taken.add(out)
        right_fields.append((column.name, out))
    qualifier = table_node.alias or table_node.name
    right = Scope(Scan([Field(c.name, c.type) for c in item.physical], item),
                  [Entry(qualifier, col, out) for col, out in right_fields], converter.position)
    fields = list(left.node.fields) + [Field(out, item.column(col).type) for col, out in right_fields]
    scope = Scope(left.node, left.entries + right.entries, converter.position)
    keys, rest = _split_condition(scope, left, {out: col for col, out in right_fields}, join.args["on"])
    if not keys:
        raise converter.error(join, f"a lookup join needs an equality between a column of the stream and a column "
                                    f"of {name!r}", UnsupportedSqlError)
    if rest and kind != "inner":
        raise converter.error(join, "a LEFT lookup join's ON condition may only have equalities with the table's "
                                    "columns", UnsupportedSqlError)
    node = LookupJoin(fields, left.node, item, kind, [a for a, _ in keys], [b for _, b in keys], right_fields)
    out = Scope(node, scope.entries, converter.position)
    for condition in rest:
        out = converter.filter(out, condition)
    return out


def _fresh(name: str, taken: set[str]) -> str:
    n = 0
    while f"{name}{n}" in taken:
        n += 1
    return f"{name}{n}"


def _split_condition(scope: Scope, left: Scope, right_columns: dict[str, str], condition: exp.Expr):
    """(stream field, table column) equality pairs, and the other conjuncts."""
    keys, rest = [], []
    for c in condition.flatten() if isinstance(condition, exp.And) else [condition]:
        if isinstance(c, exp.EQ) and isinstance(c.this, exp.Column) and isinstance(c.expression, exp.Column):
            a, b = scope.resolve(c.this), scope.resolve(c.expression)
            if a in left.node.names and b in right_columns:
                keys.append((a, right_columns[b]))
                continue
            if b in left.node.names and a in right_columns:
                keys.append((b, right_columns[a]))
                continue
        rest.append(c)
    return keys, rest
