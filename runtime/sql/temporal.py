"""Temporal joins: ``JOIN versioned FOR SYSTEM_TIME AS OF left.time ON left.key = versioned.key``.

An event-time temporal join (Flink's "Event Time Temporal Join") joins each row of the left input with
the version of the right table's row that was valid at the left row's time: the latest right row of the
same key whose time is at or before it. The right side must be a versioned table: a table with a
PRIMARY KEY and a watermark (each row a new version of its key), or a view that keeps the last row per
key by its time attribute (``ROW_NUMBER() OVER (PARTITION BY key ORDER BY time DESC) = 1``), whose
versions are the rows that dedup keeps — those not older than the key's newest one when they arrive.
The equality conditions must cover the primary key; other conditions filter an inner join's rows and,
in a LEFT join, pad the row whose version fails them. The result is append-only and keeps the left
input's time attribute.

``AS OF`` another column (a processing-time attribute) is a lookup join, planned by runtime.sql.lookup_joins
(against tables whose connector can look rows up, such as jdbc).
"""
from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from runtime.sql import joins, lookup_joins
from runtime.sql.catalog import TableDef
from runtime.sql.errors import SqlValidationError, UnsupportedSqlError
from runtime.sql.logical import Calc, Node, Rank, Scan
from runtime.sql.scope import Scope, quoted


@dataclass
class TemporalJoin(Node):
    """Each left row with the right row of its key valid at its time (``left_time``); ``keep_last``: the right
    side is a deduplicating view, whose rows older than their key's newest are no version."""
    left: Node
    right: Node
    kind: str  # inner or left
    left_keys: list[str]
    right_keys: list[str]
    left_time: str
    right_time: str
    keep_last: bool = False

    @property
    def rowtime(self) -> str | None:
        """The left input's time attribute stays one: rows are emitted once the watermark passes it."""
        return self.left_time

    @property
    def updating(self) -> bool:
        """A left row is joined once, with the version of its time: inserts only."""
        return False

    def describe(self) -> str:
        """One line for EXPLAIN: join type, keys and the two time attributes."""
        on = " AND ".join(f"{a} = {b}" for a, b in zip(self.left_keys, self.right_keys))
        return f"TemporalJoin(joinType=[{self.kind.upper()}], on=[{on}], leftTime=[{self.left_time}], " \
               f"rightTime=[{self.right_time}])"


def applies(left: Scope, join: exp.Join) -> bool:
    """Whether ``join`` reads its right side ``FOR SYSTEM_TIME AS OF`` a time and is not a lookup join."""
    versioned = isinstance(join.this, exp.Table) and join.this.args.get("version") is not None
    return versioned and not lookup_joins.applies(left, join)


def plan(converter, left: Scope, join: exp.Join) -> Scope:
    """The scope of ``left [LEFT] JOIN right FOR SYSTEM_TIME AS OF left.time ON ...``."""
    table = join.this.copy()
    version = table.args["version"]
    table.set("version", None)
    if converter.batch:
        raise converter.error(join, "event-time temporal joins (FOR SYSTEM_TIME AS OF) run in streaming mode only",
                              UnsupportedSqlError)
    as_of = _as_of(converter, left, version)
    right = converter.relation(table)
    if as_of != left.node.rowtime:
        raise converter.error(version, f"FOR SYSTEM_TIME AS OF {version.expression.sql(dialect='spark')}: an event-time "
                                       "temporal join is AS OF the left table's time attribute "
                                       f"({left.node.rowtime or 'it has none: declare a WATERMARK'})",
                              UnsupportedSqlError)
    if left.node.updating:
        raise converter.error(join, "a temporal join needs an append-only left input", UnsupportedSqlError)
    kind = joins.KINDS.get((join.args.get("side") or "").upper())
    if kind not in ("inner", "left"):
        raise converter.error(join, "temporal joins are INNER or LEFT joins (as in Flink)", UnsupportedSqlError)
    versions, keys, keep_last = versioned(converter, table, right.node)
    right = Scope(versions, right.entries, right.position)
    return _joined(converter, left, right, join, kind, keys, keep_last)


def _as_of(converter, left: Scope, version: exp.Version) -> str:
    column = version.expression
    if not isinstance(column, exp.Column):
        raise converter.error(version, f"FOR SYSTEM_TIME AS OF takes a time attribute of the left table, not "
                                       f"{column.sql(dialect='spark')}", UnsupportedSqlError)
    return left.resolve(column)


def versioned(converter, table: exp.Table, node: Node) -> tuple[Node, list[str], bool]:
    """(the right side's rows as versions, its primary key, whether they pass a keep-last dedup first)."""
    if isinstance(node, Scan) and isinstance(node.table, TableDef) and node.table.primary_key and node.rowtime:
        return node, list(node.table.primary_key), False
    calcs: list[Calc] = []
    inner = node
    while isinstance(inner, Calc) and inner.condition is None:
        calcs.append(inner)
        inner = inner.input
    if isinstance(inner, Rank) and _keeps_last(inner):
        rows = inner.input
        for calc in reversed(calcs):  # the projections of the view, over the rows dedup would keep
            rows = Calc(calc.fields, rows, calc.exprs, keeps_rowtime=calc.rowtime or _renamed_time(calc, rows.rowtime))
        if rows.rowtime is not None and set(inner.partition) <= set(rows.names):
            return rows, list(inner.partition), True
    raise converter.error(table, f"{table.name!r} is not a versioned table: FOR SYSTEM_TIME AS OF needs a table with a "
                                 "PRIMARY KEY and a WATERMARK, or a view keeping the last row per key by its time "
                                 "attribute (ROW_NUMBER() OVER (PARTITION BY key ORDER BY time DESC) = 1)",
                          UnsupportedSqlError)


def _keeps_last(rank: Rank) -> bool:
    return rank.limit == 1 and rank.number_field is None and bool(rank.partition) and len(rank.order) == 1 \
        and rank.order[0][0] == rank.input.rowtime and not rank.order[0][1] and not rank.input.updating


def _renamed_time(calc: Calc, time: str | None) -> str | None:
    return next((name for name, sql in calc.exprs if time is not None and sql == f"`{time}`"), None)


def _joined(converter, left: Scope, right: Scope, join: exp.Join, kind: str, pk: list[str], keep_last: bool) -> Scope:
    right_time = right.node.rowtime
    right, _ = joins.renamed(left, right)
    condition = join.args.get("on")
    if condition is None:
        raise converter.error(join, "a temporal join needs an ON condition with the versioned table's primary key",
                              SqlValidationError)
    scope = left.merged(right, None, {})
    conjuncts = list(condition.flatten()) if isinstance(condition, exp.And) else [condition]
    keys, times, rest = joins.classify(converter, scope, left, right, conjuncts)
    rest += times
    original = {f: e.name for e in right.entries for f in [e.field]}
    covered = {original.get(b, b) for _, b in keys}
    if not set(pk) <= covered:
        raise converter.error(join, f"a temporal join needs an equality condition on the primary key of the versioned "
                                    f"table ({', '.join(pk)})", UnsupportedSqlError)
    left_node, right_node, lkeys, rkeys = joins.aligned_keys(left.node, right.node, keys, None)
    node = TemporalJoin(list(left.node.fields) + list(right.node.fields), left_node, right_node, kind, lkeys, rkeys,
                        left.node.rowtime, right.node.rowtime or _renamed_time(right.node, right_time), keep_last)
    out = Scope(node, scope.entries, converter.position)
    if kind == "left" and rest:
        return _padded_unless(out, right_node.names, exp.and_(*rest))
    for c in rest:
        out = converter.filter(out, c)
    return out


def _padded_unless(scope: Scope, right_fields: list[str], condition: exp.Expr) -> Scope:
    """A LEFT temporal join's other ON conditions: a left row whose version fails them keeps its row, padded with
    NULLs (each left row has one version, so blanking the right columns is the padded row Flink emits)."""
    test = scope.sql(condition)
    node = scope.node
    exprs = [(n, f"CASE WHEN {test} THEN {quoted(n)} END" if n in right_fields else quoted(n)) for n in node.names]
    return Scope(Calc(list(node.fields), node, exprs, keeps_rowtime=node.rowtime), scope.entries, scope.position)
