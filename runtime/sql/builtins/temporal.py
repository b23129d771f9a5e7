"""Temporal functions. Spark's own where their meaning is Flink's; FLOOR/CEIL(t TO unit), TIMESTAMPADD,
EXTRACT(SECOND ...) (whole seconds in Flink), CONVERT_TZ and TO_TIMESTAMP_LTZ are rewritten; TIME values and
the watermark are not supported."""
from sqlglot import exp

from runtime.sql.function_defs import SAME, Function as F, call, category


def _unit(node: exp.Expr) -> bool:
    return node.args.get("to") is not None


def _floor_ceil_to(node: exp.Expr) -> exp.Expr:
    """`date_trunc(unit, x1)`, rounded up to the next unit for CEIL"""
    unit = node.args["to"]
    trunc = call("date_trunc", exp.Literal.string(unit.name.upper()), node.this)
    if isinstance(node, exp.Floor):
        return trunc
    bumped = call("timestampadd", exp.var(unit.name.upper()), exp.Literal.number(1), trunc)
    return exp.If(this=exp.EQ(this=trunc, expression=node.this), true=trunc, false=bumped)


def _timestamp_add(node: exp.TimestampAdd) -> exp.Expr:
    """`timestampadd(unit, x2, x3)`"""
    return call("timestampadd", exp.var(node.args["unit"].name.upper()), node.expression, node.this)


def _now(_node: exp.Expr) -> exp.Expr:
    """`current_timestamp()`"""
    return exp.CurrentTimestamp()


def _extract(node: exp.Extract) -> exp.Expr:
    """Spark's EXTRACT; SECOND as `second(x)` (Flink's are whole seconds)"""
    return call("second", node.expression) if node.this.name.upper() == "SECOND" else node


def _convert_tz(node: exp.Expr) -> exp.Expr:
    """`date_format(convert_timezone(x2, x3, to_timestamp_ntz(x1)), 'yyyy-MM-dd HH:mm:ss')`"""
    text, source, target = node.expressions
    moved = call("convert_timezone", source, target, call("to_timestamp_ntz", text))
    return call("date_format", moved, exp.Literal.string("yyyy-MM-dd HH:mm:ss"))


def _to_timestamp_ltz(node: exp.Expr) -> exp.Expr:
    """`timestamp_seconds(x1)` (precision 0) or `timestamp_millis(x1)` (3)"""
    value, precision = (node.expressions + [exp.Literal.number(3)])[:2]
    return call("timestamp_seconds" if precision.name == "0" else "timestamp_millis", value)


def _to_timestamp(node: exp.Expr) -> exp.Expr:
    """`try_to_timestamp(x1[, x2])`: NULL for text that does not read, as in Flink"""
    return call("try_to_timestamp", *node.expressions)


def _to_date(node: exp.Expr) -> exp.Expr:
    """`CAST(try_to_timestamp(x1, x2 or 'yyyy-MM-dd') AS DATE)`: NULL for text that does not read"""
    text, fmt = (node.expressions + [exp.Literal.string("yyyy-MM-dd")])[:2]
    return exp.Cast(this=call("try_to_timestamp", text, fmt), to=exp.DataType.build("DATE"))


def _unix_timestamp(node: exp.Expr) -> exp.Expr:
    """`unix_timestamp()`, or of text: NULL for NULL, -9223372036854775808 when it does not read (Flink's)"""
    if not node.expressions:
        return call("unix_timestamp")
    text, fmt = (node.expressions + [exp.Literal.string("yyyy-MM-dd HH:mm:ss")])[:2]
    seconds = exp.Coalesce(this=call("unix_timestamp", call("try_to_timestamp", text, fmt)),
                           expressions=[exp.Literal.number("-9223372036854775808")])
    return exp.If(this=exp.Is(this=text.copy(), expression=exp.Null()), true=exp.Null(), false=seconds)


def _literal_of(kind: str):
    return lambda n: isinstance(n.this, exp.Literal) and n.this.is_string and n.to.this == kind


FUNCTIONS = category("temporal", [
    F("DATE", "DATE string", "DATE '2024-02-29'", SAME, "DATE", matches=_literal_of(exp.DataType.Type.DATE)),
    F("TIME", "TIME string", "TIME '12:00:00'", None, "TIME", "the TIME type is not supported",
      matches=lambda n: n.to.this == exp.DataType.Type.TIME),
    F("TIMESTAMP", "TIMESTAMP string", "TIMESTAMP '2024-02-29 10:00:00'", SAME, "TIMESTAMP",
      matches=lambda n: isinstance(n.this, exp.Literal) and n.this.is_string and n.to.is_type("timestamp", "timestamptz")),
    F("INTERVAL", "INTERVAL string range", None, SAME, "INTERVAL", "in arithmetic with times and in windows"),
    F("LOCALTIME", "LOCALTIME", None, None, "TIME", "the TIME type is not supported"),
    F("LOCALTIMESTAMP", "LOCALTIMESTAMP", None, None, "TIMESTAMP", "use CURRENT_TIMESTAMP"),
    F("CURRENT_TIME", "CURRENT_TIME", None, None, "TIME", "the TIME type is not supported"),
    F("CURRENT_DATE", "CURRENT_DATE", "CURRENT_DATE", SAME, "DATE"),
    F("CURRENT_TIMESTAMP", "CURRENT_TIMESTAMP", "CURRENT_TIMESTAMP", SAME, "TIMESTAMP_LTZ"),
    F("NOW", "NOW()", "NOW()", _now, "TIMESTAMP_LTZ"),
    F("CURRENT_ROW_TIMESTAMP", "CURRENT_ROW_TIMESTAMP()", "CURRENT_ROW_TIMESTAMP()", _now, "TIMESTAMP_LTZ"),
    F("PROCTIME", "PROCTIME()", "PROCTIME()", _now, "TIMESTAMP_LTZ", "the wall clock when a row is processed"),
    F("EXTRACT", "EXTRACT(timeintervalunit FROM temporal)", "EXTRACT(YEAR FROM ts)", _extract, "BIGINT"),
    F("YEAR", "YEAR(date)", "YEAR(ts)", SAME, "BIGINT"),
    F("QUARTER", "QUARTER(date)", "QUARTER(ts)", SAME, "BIGINT"),
    F("MONTH", "MONTH(date)", "MONTH(ts)", SAME, "BIGINT"),
    F("WEEK", "WEEK(date)", "WEEK(ts)", "weekofyear({0})", "BIGINT", "the ISO week"),
    F("DAYOFYEAR", "DAYOFYEAR(date)", "DAYOFYEAR(ts)", SAME, "BIGINT"),
    F("DAYOFMONTH", "DAYOFMONTH(date)", "DAYOFMONTH(ts)", SAME, "BIGINT"),
    F("DAYOFWEEK", "DAYOFWEEK(date)", "DAYOFWEEK(ts)", SAME, "BIGINT"),
    F("HOUR", "HOUR(timestamp)", "HOUR(ts)", SAME, "BIGINT"),
    F("MINUTE", "MINUTE(timestamp)", "MINUTE(ts)", SAME, "BIGINT"),
    F("SECOND", "SECOND(timestamp)", "SECOND(ts)", SAME, "BIGINT"),
    F("FLOOR (time)", "FLOOR(timepoint TO timeintervalunit)", "FLOOR(ts TO HOUR)", _floor_ceil_to, "arg0",
      matches=_unit),
    F("CEIL (time)", "CEIL(timepoint TO timeintervalunit)", "CEIL(ts TO HOUR)", _floor_ceil_to, "arg0", matches=_unit),
    F("OVERLAPS", "(timepoint1, temporal1) OVERLAPS (timepoint2, temporal2)", None, None, "BOOLEAN",
      "Spark has no OVERLAPS"),
    F("DATE_FORMAT", "DATE_FORMAT(date_expr, string)", "DATE_FORMAT(ts, 'yyyy-MM-dd HH:mm')", SAME, "STRING"),
    F("TIMESTAMPADD", "TIMESTAMPADD(timeintervalunit, interval, timepoint)", "TIMESTAMPADD(HOUR, 2, ts)",
      _timestamp_add, "arg2"),
    F("TIMESTAMPDIFF", "TIMESTAMPDIFF(timepointunit, timepoint1, timepoint2)",
      "TIMESTAMPDIFF(DAY, ts, TIMESTAMP '2024-03-01 00:00:00')", SAME, "INT"),
    F("CONVERT_TZ", "CONVERT_TZ(string1, string2, string3)", "CONVERT_TZ('2024-01-01 00:00:00', 'UTC', 'Asia/Tokyo')",
      _convert_tz, "STRING"),
    F("FROM_UNIXTIME", "FROM_UNIXTIME(numeric[, string])", "FROM_UNIXTIME(i * 100000)", SAME, "STRING"),
    F("UNIX_TIMESTAMP", "UNIX_TIMESTAMP([string1[, string2]])", "UNIX_TIMESTAMP(t)", _unix_timestamp, "BIGINT"),
    F("TO_DATE", "TO_DATE(string1[, string2])", "TO_DATE('29|02|2024', 'dd|MM|yyyy')", _to_date, "DATE"),
    F("TO_TIMESTAMP", "TO_TIMESTAMP(string1[, string2])", "TO_TIMESTAMP(t)", _to_timestamp, "TIMESTAMP"),
    F("TO_TIMESTAMP_LTZ", "TO_TIMESTAMP_LTZ(numeric, precision)", "TO_TIMESTAMP_LTZ(1700000000, 0)", _to_timestamp_ltz,
      "TIMESTAMP_LTZ"),
    F("CURRENT_WATERMARK", "CURRENT_WATERMARK(rowtime)", "CURRENT_WATERMARK(ts)", None, "TIMESTAMP",
      "watermarks are not visible to expressions here"),
])
