"""CREATE TABLE and CREATE VIEW statements into catalog entries, checked as Flink checks them."""
from __future__ import annotations

from sqlglot import exp

from runtime.sql import connectors
from runtime.sql.catalog import Column, TableDef, ViewDef, Watermark
from runtime.sql.errors import SqlValidationError, UnsupportedSqlError
from runtime.sql.functions import to_spark
from runtime.sql.types import TIME_TYPES, spark_type
from runtime.sql.typing import flink_expression, infer_type

UNIT_MICROS = {"MICROSECOND": 1, "MILLISECOND": 1_000, "SECOND": 1_000_000, "MINUTE": 60_000_000,
               "HOUR": 3_600_000_000, "DAY": 86_400_000_000}


def table_def(create: exp.Create, text: str) -> TableDef:
    """A TableDef from ``CREATE [TEMPORARY] TABLE``; SqlValidationError names the column or option at fault."""
    schema = create.this
    if not isinstance(schema, exp.Schema):
        raise UnsupportedSqlError("CREATE TABLE needs a column list (CREATE TABLE ... AS and LIKE are not supported)")
    name = schema.this.sql(dialect="spark").replace("`", "")
    columns: list = []
    watermark_node, primary_key = None, []
    for item in schema.expressions:
        if isinstance(item, exp.ColumnDef):
            columns.append(_column(item, columns))
        elif isinstance(item, exp.WatermarkColumnConstraint):
            watermark_node = item
        elif isinstance(item, exp.PrimaryKey):
            primary_key = [e.name for e in item.expressions]
        else:
            raise UnsupportedSqlError(f"table {name!r}: {item.sql()} is not supported in CREATE TABLE")
    _check_unique(name, [c.name for c in columns])
    table = TableDef(name, columns, _options(create), primary_key=primary_key,
                     partition_keys=_partition_keys(create), temporary=bool(create.args.get("temporary")) or
                     _is_temporary(create), text=text)
    for key in primary_key + table.partition_keys:
        if table.column(key) is None:
            raise SqlValidationError(f"table {name!r}: key column {key!r} is not a column of the table")
    if watermark_node is not None:
        table.watermark = watermark(table, watermark_node)
    connectors.check_options(table)
    return table


def _column(item: exp.ColumnDef, earlier: list[Column]) -> Column:
    kind = item.args.get("kind")
    computed = next((c.args["kind"] for c in item.args.get("constraints") or []
                     if isinstance(c.args.get("kind"), exp.ComputedColumnConstraint)), None)
    not_null = any(isinstance(c.args.get("kind"), exp.NotNullColumnConstraint) for c in item.args.get("constraints") or [])
    if computed is not None:
        expr = computed.this
        missing = [c.name for c in expr.find_all(exp.Column) if c.name not in {e.name for e in earlier}]
        if missing:
            raise SqlValidationError(f"computed column {item.name!r} refers to unknown column {missing[0]!r}")
        types = {c.name: c.type for c in earlier}
        flink = flink_expression(expr, types)
        return Column(item.name, infer_type(flink, types), True, to_spark(flink, types), expr.sql(dialect="spark"))
    if kind is None:
        raise SqlValidationError(f"column {item.name!r} needs a type or an expression (name AS expr)")
    if kind.this == exp.DataType.Type.TIME:
        raise UnsupportedSqlError(f"column {item.name!r}: type TIME is not supported")
    return Column(item.name, spark_type(kind), not not_null)


def watermark(table: TableDef, node: exp.WatermarkColumnConstraint) -> Watermark:
    """``WATERMARK FOR ts AS ts [- INTERVAL 'n' UNIT]``: a bounded out-of-orderness of n."""
    column = node.this.name
    target = table.column(column)
    if target is None:
        raise SqlValidationError(f"table {table.name!r}: the watermark is for {column!r}, which is not a column")
    if target.type not in TIME_TYPES:
        raise SqlValidationError(f"table {table.name!r}: the watermark column {column!r} must be a TIMESTAMP(3) or "
                                 f"TIMESTAMP_LTZ(3), it is {target.type}")
    expr = node.expression
    text = expr.sql(dialect="spark")
    if isinstance(expr, exp.Column) and expr.name == column:
        return Watermark(column, 0, text)
    if isinstance(expr, exp.Sub) and isinstance(expr.this, exp.Column) and expr.this.name == column \
            and isinstance(expr.expression, exp.Interval):
        return Watermark(column, interval_micros(expr.expression), text)
    raise UnsupportedSqlError(f"table {table.name!r}: watermark expression {text} is not supported; "
                              f"use {column} - INTERVAL 'n' SECOND (bounded out-of-orderness) or {column}")


def interval_micros(node: exp.Expr) -> int:
    """Microseconds of ``INTERVAL 'n' UNIT``; UnsupportedSqlError for other forms."""
    if not isinstance(node, exp.Interval):
        raise UnsupportedSqlError(f"expected an interval like INTERVAL '5' SECOND, got {node.sql()}")
    unit = (node.args.get("unit").name if node.args.get("unit") is not None else "SECOND").upper()
    unit = unit[:-1] if unit.endswith("S") and unit[:-1] in UNIT_MICROS else unit
    if unit not in UNIT_MICROS:
        raise UnsupportedSqlError(f"interval unit {unit} is not supported here (use {', '.join(UNIT_MICROS)})")
    try:
        value = float(node.this.name)
    except ValueError:
        raise SqlValidationError(f"interval {node.sql()} is not a number of {unit}s") from None
    return int(round(value * UNIT_MICROS[unit]))


def view_def(create: exp.Create, text: str, columns: list[Column]) -> ViewDef:
    """The ViewDef of a CREATE VIEW whose query plans into ``columns``."""
    name = create.this.sql(dialect="spark").replace("`", "")
    return ViewDef(name, create.expression, text, columns, temporary=_is_temporary(create))


def _options(create: exp.Create) -> dict[str, str]:
    props = create.args.get("properties")
    options = {}
    for prop in props.expressions if props is not None else []:
        if type(prop) is exp.Property:
            key = prop.this.name if isinstance(prop.this, exp.Literal) else prop.name
            options[key] = prop.args["value"].name
    return options


def _partition_keys(create: exp.Create) -> list[str]:
    props = create.args.get("properties")
    for prop in props.expressions if props is not None else []:
        if isinstance(prop, exp.PartitionedByProperty):
            node = prop.this
            return [e.name for e in (node.expressions if hasattr(node, "expressions") and node.expressions else [node])]
    return []


def _is_temporary(create: exp.Create) -> bool:
    props = create.args.get("properties")
    return any(isinstance(p, exp.TemporaryProperty) for p in (props.expressions if props is not None else []))


def _check_unique(table: str, names: list[str]) -> None:
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise SqlValidationError(f"table {table!r} declares column {repeated[0]!r} more than once")
