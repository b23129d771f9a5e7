"""SQL queries (sqlglot ASTs) into logical plans, names resolved against the catalog.

One method per clause: FROM (tables, views, subqueries, window table functions, joins), WHERE,
GROUP BY and aggregates (runtime.sql.aggregates), OVER and ROW_NUMBER (runtime.sql.ranking), the
SELECT list, DISTINCT and UNION ALL. What Flink has but this planner cannot run faithfully is
refused by name (UnsupportedSqlError) instead of being run with other semantics.
"""
from __future__ import annotations

from sqlglot import exp

from runtime.sql import (aggregates, functions, joins, match_recognize, over, ranking, session_zone, set_operations,
                         subqueries, temporal, unnest, user_functions, windows)
from runtime.sql.catalog import StreamTable, TableDef, ViewDef
from runtime.sql.errors import SqlValidationError, UnsupportedSqlError
from runtime.sql.logical import Calc, Field, GroupAggregate, Node, Scan, Union, Values, WindowTVF
from runtime.sql.scope import Entry, Scope, quoted
from runtime.sql.typing import infer_type


class Converter:
    """Plans queries of one statement against the catalog, in streaming or batch mode."""
    def __init__(self, catalog, runtime_mode: str = "streaming", position=None, time_zone: str = "UTC"):
        self.catalog = catalog
        self.time_zone = time_zone  # the session's: TIMESTAMP_LTZ fields are read in it (runtime.sql.session_zone)
        self.batch = runtime_mode == "batch"
        self.position = position
        self.ctes: dict[str, exp.Expr] = {}
        self.views_seen: list[str] = []

    def error(self, node: exp.Expr, message: str, cls=SqlValidationError):
        """An SqlError of class ``cls`` positioned at ``node``'s first identifier in the script."""
        from runtime.sql.scope import position_of

        line, column = position_of(node, self.position)
        return cls(message, line, column)

    # -- queries --------------------------------------------------------------------------------
    def query(self, query: exp.Expr) -> Node:
        """The plan of a SELECT, UNION ALL or VALUES; its fields are the query's columns."""
        query = user_functions.resolve(query, self.catalog, self.error)
        functions.check(query, user_functions.called_names(self.catalog),
                        lambda node, message: self.error(node, message, UnsupportedSqlError))
        with session_zone.planning_in(self.time_zone):
            return self._query(query)

    def _query(self, query: exp.Expr) -> Node:
        for cte in (query.args.get("with_") or exp.With()).expressions:
            self.ctes[cte.alias] = cte.this
        if isinstance(query, exp.Union):
            return self.union(query)
        if isinstance(query, (exp.Intersect, exp.Except)):
            return ranking.order_limit(self, query, set_operations.plan(self, query))
        if isinstance(query, exp.Subquery):
            return self.query(query.this)
        if isinstance(query, exp.Values):
            return self.values(query)
        if not isinstance(query, exp.Select):
            raise self.error(query, f"{query.key.upper()} is not a query", UnsupportedSqlError)
        return self.select(query)

    def union(self, query: exp.Union) -> Node:
        """UNION ALL as a Union; UNION (distinct) as a Union under a GroupAggregate over every column; then
        the ORDER BY / LIMIT of the whole (ranking.order_limit)."""
        union = self._union_all(query, self.query(query.this), self.query(query.expression))
        if query.args.get("distinct"):
            union = GroupAggregate(list(union.fields), union, union.names, [], emit_final=self.batch)
        return ranking.order_limit(self, query, union)

    def _union_all(self, query, left: Node, right: Node) -> Node:
        if len(left.fields) != len(right.fields):
            raise self.error(query, f"UNION ALL of {len(left.fields)} and {len(right.fields)} columns: "
                                    "both sides need the same number of columns")
        if right.names != left.names:  # the right side takes the left side's names, by position
            right = Calc(list(left.fields), right, [(a, quoted(b)) for a, b in zip(left.names, right.names)])
        branches = [*(left.branches if isinstance(left, Union) else [left]),
                    *(right.branches if isinstance(right, Union) else [right])]
        return Union(list(left.fields), branches)

    def values(self, query: exp.Values) -> Node:
        """VALUES of literals as a Values node (Flink's EXPR$n names when there is no alias)."""
        rows = []
        names = [c.name for c in query.args["alias"].columns] if query.args.get("alias") else []
        for tuple_ in query.expressions:
            values = [_literal(v, self) for v in tuple_.expressions]
            names = names or [f"EXPR${i}" for i in range(len(values))]
            rows.append(dict(zip(names, values)))
        fields = [Field(n, _literal_type([r[n] for r in rows])) for n in names]
        return Values(fields, rows)

    def select(self, select: exp.Select) -> Node:
        """The plan of one SELECT: FROM, WHERE, aggregation or OVER, the SELECT list, DISTINCT."""
        for cte in (select.args.get("with_") or exp.With()).expressions:
            self.ctes[cte.alias] = cte.this
        ranked = ranking.top_n(self, select)
        if ranked is not None:
            scope, where = ranked
        else:
            scope, where = self.from_clause(select), select.args.get("where")
        if where is not None:
            scope = self.where(scope, where.this)
        if aggregates.has_aggregation(select):
            scope, projections = aggregates.plan(self, select, scope)
        elif over.has_over(select):
            scope, projections = over.plan(self, select, scope)
        else:
            scope, projections = self._rows_of(scope, select), select.expressions
            if any(subqueries.has_subquery(p) for p in projections):
                scope, projections = subqueries.plan_scalars(self, scope, [p.copy() for p in projections])
        node = self.project(scope, projections).node
        if select.args.get("distinct"):
            node = GroupAggregate(list(node.fields), node, node.names, [], emit_final=self.batch)
        return ranking.order_limit(self, select, node)

    def _rows_of(self, scope: Scope, select: exp.Select) -> Scope:
        """A window TVF selected as it is (``SELECT * FROM TABLE(TUMBLE(...))``) stays one, so that a window join
        or a window aggregate over this subquery sees it; any other projection reads its rows (plain_tvf)."""
        node = scope.node
        if isinstance(node, WindowTVF) and node.window["type"] != "session" and not select.args.get("distinct") \
                and self.project(scope, select.expressions).node is node:
            return scope
        return windows.plain_tvf(self, scope)

    # -- FROM -----------------------------------------------------------------------------------
    def from_clause(self, select: exp.Select) -> Scope:
        """The scope of FROM with its joins (a one-row Values when there is no FROM)."""
        source = select.args.get("from_")
        if source is None:
            values = Values([Field("EXPR$dummy", "INT")], [{"EXPR$dummy": 0}])
            return Scope.of(values, None, self.position)
        scope = self.relation(source.this)
        for join in select.args.get("joins") or []:
            planner = unnest.plan if unnest.applies(join) else temporal.plan if temporal.applies(scope, join) else joins.plan
            scope = planner(self, scope, join)
        if select.args.get("match") is not None:
            scope = match_recognize.plan(self, scope, select.args["match"])
        return scope

    def relation(self, node: exp.Expr) -> Scope:
        """The scope of one item of FROM: a table, view, CTE, subquery or table function."""
        alias = node.alias or None
        if isinstance(node, exp.Table) and node.args.get("version") is not None:
            raise self.error(node, "FOR SYSTEM_TIME AS OF belongs to the right side of a join: a temporal join (AS OF the "
                                   "left table's time attribute) or a lookup join (AS OF s.proc_time, a jdbc table)",
                             UnsupportedSqlError)
        if isinstance(node, exp.Subquery):
            return Scope.of(self.query(node.this), alias, self.position)
        if isinstance(node, exp.Values):
            return Scope.of(self.values(node), alias, self.position)
        if isinstance(node, exp.Table) and isinstance(node.this, exp.Anonymous):
            return windows.table_function(self, node, alias)
        if not isinstance(node, exp.Table):
            raise self.error(node, f"{node.sql(dialect='spark')} is not supported in FROM", UnsupportedSqlError)
        name = ".".join(p.name for p in node.parts)
        qualifier = alias or node.name
        if name in self.ctes:
            return Scope.of(self.query(self.ctes[name]), qualifier, self.position)
        item = self.catalog.get(name)
        if item is None:
            known = ", ".join(sorted(self.catalog.tables)) or "none"
            raise self.error(node, f"table or view {name!r} does not exist (known: {known})")
        if isinstance(item, ViewDef):
            if name in self.views_seen:
                raise self.error(node, f"view {name!r} refers to itself")
            self.views_seen.append(name)
            plan = self.query(item.query.copy())
            self.views_seen.pop()
            return Scope.of(plan, qualifier, self.position)
        return Scope.of(self.scan(item), qualifier, self.position)

    def scan(self, item: TableDef | StreamTable) -> Scan:
        """A Scan of a catalog table or registered stream, with its time attribute."""
        changelog = False
        if isinstance(item, TableDef):
            from runtime.sql import connectors

            changelog = connectors.is_changelog_source(item)
            rowtime = item.watermark.column if item.watermark else None
        else:
            rowtime = item.rowtime
        return Scan([Field(c.name, c.type) for c in item.columns], item, rowtime, changelog)

    # -- WHERE and SELECT -------------------------------------------------------------------------
    def where(self, scope: Scope, condition: exp.Expr) -> Scope:
        """WHERE: its subqueries as joins (runtime.sql.subqueries), the rest as a filter."""
        if subqueries.has_subquery(condition):
            scope, rest = subqueries.plan_where(self, scope, condition)
            return scope if rest is None else self.filter(scope, rest)
        return self.filter(scope, condition)

    def filter(self, scope: Scope, condition: exp.Expr) -> Scope:
        """WHERE/HAVING as a Calc; over a window TVF the rows are filtered before they are windowed."""
        node = scope.node
        if isinstance(node, WindowTVF):  # WHERE over a window TVF filters its rows before they are windowed
            inner = Scope(node.input, [e for e in scope.entries if e.field in node.input.names], scope.position)
            filtered = self.filter(inner, condition).node
            tvf = WindowTVF(list(node.fields), filtered, node.window, node.time_column, node.partition)
            return Scope(tvf, scope.entries, scope.position)
        calc = Calc(list(node.fields), node, [(n, quoted(n)) for n in node.names], scope.sql(condition),
                    keeps_rowtime=node.rowtime)
        return Scope(calc, scope.entries, scope.position)

    def project(self, scope: Scope, projections: list[exp.Expr]) -> Scope:
        """The SELECT list as a Calc; names from aliases, columns, or Flink's EXPR$n."""
        exprs: list[tuple[str, str]] = []
        fields: list[Field] = []
        entries: list[Entry] = []
        rowtime = None
        types = {f.name: f.type for f in scope.node.fields}
        for i, item in enumerate(projections):
            for name, expr in self._expand(scope, item, i):
                name = _unique(name, [n for n, _ in exprs])
                field = scope.field_of(expr)
                sql = quoted(field) if field else scope.sql(expr)
                if field is not None and field == scope.node.rowtime and rowtime is None:
                    rowtime = name
                exprs.append((name, sql))
                fields.append(Field(name, types[field] if field else infer_type(scope.typed(expr), types)))
                entries.append(Entry(None, name, name))
        if [s for _, s in exprs] == [quoted(n) for n in scope.node.names] and \
                [n for n, _ in exprs] == scope.node.names:
            return Scope(scope.node, entries, scope.position)
        return Scope(Calc(fields, scope.node, exprs, keeps_rowtime=rowtime), entries, scope.position)

    def _expand(self, scope: Scope, item: exp.Expr, index: int) -> list[tuple[str, exp.Expr]]:
        if isinstance(item, exp.Star) or (isinstance(item, exp.Column) and isinstance(item.this, exp.Star)):
            qualifier = item.table if isinstance(item, exp.Column) else None
            if qualifier and qualifier not in scope.qualifiers():
                raise scope.error(item, f"table or alias {qualifier!r} is not in the FROM clause")
            return [(e.name, exp.column(e.name, table=e.qualifier) if e.qualifier else exp.column(e.name))
                    for e in scope.entries if not e.name.startswith("__") and (not qualifier or e.qualifier == qualifier)
                    and not (qualifier is None and _shadowed(scope, e))]
        if isinstance(item, exp.Alias):
            return [(item.alias, item.this)]
        if isinstance(item, exp.Column):
            return [(item.name, item)]
        return [(f"EXPR${index}", item)]


def _shadowed(scope: Scope, entry: Entry) -> bool:
    """In ``SELECT *`` over a join, a field appears once even when both sides name it (USING columns)."""
    first = next(e for e in scope.entries if e.field == entry.field)
    return first is not entry


def _unique(name: str, taken: list[str]) -> str:
    if name not in taken:
        return name
    n = 0
    while f"{name}{n}" in taken:
        n += 1
    return f"{name}{n}"


def _literal_type(values: list) -> str:
    """The column type of VALUES literals: INT (BIGINT when large), DOUBLE, BOOLEAN or STRING."""
    present = [v for v in values if v is not None]
    if present and all(isinstance(v, bool) for v in present):
        return "BOOLEAN"
    if present and all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        return "INT" if all(-2**31 <= v < 2**31 for v in present) else "BIGINT"
    if present and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present):
        return "DOUBLE"
    return "STRING"


def _literal(value: exp.Expr, converter: Converter):
    if isinstance(value, exp.Literal):
        return value.this if value.is_string else (float(value.this) if "." in value.this else int(value.this))
    if isinstance(value, exp.Boolean):
        return value.this
    if isinstance(value, exp.Null):
        return None
    if isinstance(value, exp.Neg) and isinstance(value.this, exp.Literal):
        return -_literal(value.this, converter)
    raise converter.error(value, f"VALUES takes literals here, not {value.sql(dialect='spark')}", UnsupportedSqlError)
