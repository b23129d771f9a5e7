"""Flink's built-in scalar functions, translated where Spark's name or meaning differs.

Expressions are parsed by sqlglot with the Flink dialect and printed as Spark SQL; most of Flink's
built-ins exist in Spark under the same name with the same meaning (UPPER, SUBSTRING, DATE_FORMAT,
TIMESTAMPDIFF, REGEXP_EXTRACT, ...). The rest are rewritten here, one function per entry of
:data:`REWRITES`; functions with no Spark counterpart are refused by name.
"""
from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from runtime.sql.errors import UnsupportedSqlError

AGGREGATES = {"COUNT", "SUM", "MIN", "MAX", "AVG"}
UNSUPPORTED = {"CURRENT_WATERMARK", "JSON_OBJECTAGG", "JSON_ARRAYAGG", "TUMBLE_START", "TUMBLE_END", "HOP_START",
               "HOP_END", "SESSION_START", "SESSION_END", "TUMBLE_ROWTIME", "HOP_ROWTIME", "SESSION_ROWTIME"}


def _anonymous(name: str) -> Callable[[exp.Expr], exp.Expr]:
    return lambda node: exp.Anonymous(this=name, expressions=[node.this, *node.expressions])


def _split_index(node: exp.Anonymous) -> exp.Expr:
    """SPLIT_INDEX(s, sep, i): the i-th (from 0) piece of s split at the literal sep; NULL if none."""
    text, sep, index = node.expressions
    quoted = exp.Concat(expressions=[exp.Literal.string("\\Q"), sep, exp.Literal.string("\\E")])
    split = exp.Anonymous(this="split", expressions=[text, quoted])
    return exp.Anonymous(this="try_element_at", expressions=[split, exp.Add(this=index, expression=exp.Literal.number(1))])


def _floor_ceil_to(node: exp.Expr) -> exp.Expr:
    """FLOOR(ts TO HOUR) -> date_trunc('HOUR', ts); CEIL(ts TO unit) rounds up to the next unit."""
    unit = node.args.get("to")
    if unit is None:
        return node
    trunc = exp.Anonymous(this="date_trunc", expressions=[exp.Literal.string(unit.name.upper()), node.this])
    if isinstance(node, exp.Floor):
        return trunc
    bumped = exp.Anonymous(this="timestampadd", expressions=[exp.var(unit.name.upper()), exp.Literal.number(1), trunc])
    return exp.If(this=exp.EQ(this=trunc, expression=node.this), true=trunc, false=bumped)


def _timestamp_add(node: exp.TimestampAdd) -> exp.Expr:
    unit = node.args.get("unit")
    return exp.Anonymous(this="timestampadd", expressions=[exp.var(unit.name.upper()), node.expression, node.this])


def _current_timestamp(_node) -> exp.Expr:
    return exp.CurrentTimestamp()


def _hash_code(node) -> exp.Expr:
    return exp.Anonymous(this="hash", expressions=list(node.expressions))


REWRITES: dict[str, Callable[..., exp.Expr]] = {
    "SPLIT_INDEX": _split_index,
    "NOW": _current_timestamp,
    "PROCTIME": _current_timestamp,
    "LOCALTIMESTAMP": _current_timestamp,
    "HASH_CODE": _hash_code,
    "CHAR_LENGTH": _anonymous("char_length"),
}


def translate(node: exp.Expr) -> exp.Expr:
    """A copy of ``node`` with Flink's functions rewritten to Spark's; UnsupportedSqlError names the rest."""
    def rewrite(n: exp.Expr) -> exp.Expr:
        if isinstance(n, (exp.Floor, exp.Ceil)) and n.args.get("to") is not None:
            return _floor_ceil_to(n)
        if isinstance(n, exp.TimestampAdd):
            return _timestamp_add(n)
        if isinstance(n, exp.Extract) and n.this.name.upper() == "SECOND":  # Flink: whole seconds, Spark: decimal
            return exp.Anonymous(this="second", expressions=[n.expression])
        if isinstance(n, exp.Anonymous):
            name = n.name.upper()
            if name in UNSUPPORTED:
                raise UnsupportedSqlError(f"function {name} is not supported")
            if name in REWRITES:
                return REWRITES[name](n)
        return n
    return node.copy().transform(rewrite)


def to_spark(node: exp.Expr) -> str:
    """Spark SQL text of a (resolved) Flink expression."""
    return translate(node).sql(dialect="spark")


def builtin_names() -> list[str]:
    """SHOW FUNCTIONS: the aggregates and the scalar functions Flink users reach for most, as translated."""
    scalar = ["ABS", "CAST", "CEIL", "CHAR_LENGTH", "COALESCE", "CONCAT", "CONCAT_WS", "DATE_FORMAT", "EXTRACT",
              "FLOOR", "FROM_UNIXTIME", "HASH_CODE", "IF", "INITCAP", "LOWER", "LPAD", "LTRIM", "MD5", "MOD", "NOW",
              "NULLIF", "POSITION", "POWER", "PROCTIME", "REGEXP_EXTRACT", "REGEXP_REPLACE", "REPLACE", "ROUND",
              "RPAD", "RTRIM", "SPLIT_INDEX", "SQRT", "SUBSTRING", "TIMESTAMPADD", "TIMESTAMPDIFF", "TO_DATE",
              "TO_TIMESTAMP", "TRIM", "TRY_CAST", "UNIX_TIMESTAMP", "UPPER"]
    return sorted(AGGREGATES | set(scalar) | {"ROW_NUMBER", "TUMBLE", "HOP", "CUMULATE", "SESSION"})
