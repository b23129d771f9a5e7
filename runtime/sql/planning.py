"""A query or INSERT statement into a logical plan ending in its sink, checked against the target."""
from __future__ import annotations

from sqlglot import exp

from runtime.connectors.collect import collect_params
from runtime.connectors.result_types import RESULT_SCHEMA, RESULT_TIMES
from runtime.sql import connectors
from runtime.sql.catalog import TableDef
from runtime.sql.errors import SqlValidationError, UnsupportedSqlError
from runtime.sql.logical import Calc, Field, LookupJoin, Node, Scan, Sink
from runtime.sql.scope import quoted
from runtime.sql.types import TIME_TYPES


def plan_statement(executor, stmt) -> Sink:
    """The logical plan of a query (into collect) or INSERT (cast to the target's columns), ending in a Sink."""
    converter = executor.converter(stmt)
    if stmt.kind == "query":
        plan = converter.query(stmt.ast.copy())
        _check_bounded(executor, stmt, plan)
        visible = _visible(plan)
        return Sink(list(plan.fields), visible, "collect", _with_types(executor, visible, collect_params()))
    if stmt.kind != "insert":
        raise stmt.error(UnsupportedSqlError, f"{stmt.kind} is not a query or INSERT")
    target_node = stmt.ast.this
    if isinstance(target_node, exp.Schema):
        raise stmt.error(UnsupportedSqlError, "INSERT INTO t (columns) is not supported: select every column in order")
    name = ".".join(p.name for p in target_node.parts)
    target = executor.catalog.require(name)
    if not isinstance(target, TableDef):
        raise stmt.error(SqlValidationError, f"{name!r} is a view: INSERT INTO needs a table")
    if stmt.ast.args.get("overwrite"):
        raise stmt.error(UnsupportedSqlError, "INSERT OVERWRITE is not supported")
    plan = converter.query(stmt.ast.expression.copy())
    _check_bounded(executor, stmt, plan)
    params = connectors.sink_params(target)
    changelog = connectors.sink_changelog(target)
    if plan.updating and changelog == connectors.INSERT_ONLY:
        raise stmt.error(UnsupportedSqlError, f"table sink {name!r} ({connectors.connector_of(target)}) does not "
                                              f"support consuming the update and delete changes produced by "
                                              f"{_updating_node(plan).describe()}")
    cast = _cast_to(stmt, plan, target)
    return Sink(list(plan.fields), cast, name, _with_types(executor, cast, params),
                list(target.primary_key) if changelog == connectors.UPSERT else [])


def _with_types(executor, plan: Node, params: dict) -> dict:
    """A sink's params plus the result's types and its time columns' zones: TIMESTAMP leaves plain, TIMESTAMP_LTZ
    in the session's zone (runtime.connectors.result_types)."""
    zone = executor.local_time_zone
    times = {f.name: zone if f.type == "TIMESTAMP_LTZ" else None for f in plan.fields if f.type in TIME_TYPES}
    schema = ", ".join(f"{quoted(f.name)} {f.type}" for f in plan.fields if not f.name.startswith("__"))
    return {**params, RESULT_SCHEMA: schema, RESULT_TIMES: times}


def check_reachable(catalog, sinks: list[Sink]) -> None:
    """Before submitting: every connector table the plans read, look up or write is asked whether the job can work
    (runtime.sql.connectors.check_reachable), so a database that refuses is reported here, not by a failing job."""
    for sink in sinks:
        target = catalog.get(sink.target) if sink.target != "collect" else None
        if isinstance(target, TableDef):
            connectors.check_reachable(target, "sink")
        for node in _nodes(sink):
            if isinstance(node, Scan) and isinstance(node.table, TableDef):
                connectors.check_reachable(node.table, "source")
            elif isinstance(node, LookupJoin):
                connectors.check_reachable(node.table, "lookup")


def _nodes(node: Node) -> list[Node]:
    return [node] + [n for child in node.inputs for n in _nodes(child)]


def _visible(plan: Node) -> Node:
    """Internal columns (a global aggregate's constant key) do not reach the client."""
    hidden = [f for f in plan.fields if f.name.startswith("__")]
    if not hidden:
        return plan
    keep = [f for f in plan.fields if not f.name.startswith("__")]
    return Calc(keep, plan, [(f.name, quoted(f.name)) for f in keep], keeps_rowtime=plan.rowtime)


def _cast_to(stmt, plan: Node, target: TableDef) -> Node:
    columns = target.physical
    fields = [f for f in plan.fields if not f.name.startswith("__")]
    if len(fields) != len(columns):
        raise stmt.error(SqlValidationError, f"INSERT INTO {target.name}: the query has {len(fields)} columns, the "
                                             f"table {len(columns)} ({', '.join(c.name for c in columns)})")
    exprs = [(c.name, quoted(f.name) if f.type == c.type else f"CAST({quoted(f.name)} AS {c.type})")
             for f, c in zip(fields, columns)]
    if [(n, s) for n, s in exprs] == [(f.name, quoted(f.name)) for f in plan.fields]:
        return plan  # the query's columns are the table's already
    return Calc([Field(c.name, c.type) for c in columns], plan, exprs)


def _check_bounded(executor, stmt, plan: Node) -> None:
    if executor.runtime_mode != "batch":
        return
    for scan in _scans(plan):
        if scan.changelog:
            raise stmt.error(UnsupportedSqlError, f"querying the unbounded table {scan.table.name!r} "
                                                  f"({connectors.connector_of(scan.table)}) in batch mode is not "
                                                  "allowed: use streaming mode")
        params = connectors.source_params(scan.table, "batch") if isinstance(scan.table, TableDef) else {}
        if params.get("connector") == "datagen" and params.get("number_of_rows") is None:
            raise stmt.error(UnsupportedSqlError, f"querying the unbounded table {scan.table.name!r} in batch mode is "
                                                  "not allowed: give it 'number-of-rows' or use streaming mode")


def _scans(node: Node) -> list[Scan]:
    found = [node] if isinstance(node, Scan) else []
    for child in node.inputs:
        found += _scans(child)
    return found


def _updating_node(node: Node) -> Node:
    for child in node.inputs:
        if child.updating:
            return _updating_node(child)
    return node
