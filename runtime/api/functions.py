"""Column expressions that read like PySpark's and travel as Spark SQL text.

``col("amount") > 0.1`` builds an expression without a JVM in the client; the TaskManager hands its
SQL to Spark (``F.expr``). Any PySpark function is reachable by name (``F.upper(col("url"))``), so the
vocabulary is Spark's own. Real PySpark Column objects are accepted too and converted to their SQL.
"""
from __future__ import annotations

from typing import Any


class Column:
    """A column expression for select/filter/with_columns, rendered as Spark SQL."""
    __slots__ = ("sql",)

    def __init__(self, sql: str):
        self.sql = sql

    def __repr__(self) -> str:
        return f"Column<'{self.sql}'>"

    def __str__(self) -> str:
        return self.sql

    def _bin(self, op: str, other: Any, reverse: bool = False) -> Column:
        left, right = (to_sql(other), self.sql) if reverse else (self.sql, to_sql(other))
        return Column(f"({left} {op} {right})")

    def __add__(self, o): return self._bin("+", o)
    def __radd__(self, o): return self._bin("+", o, True)
    def __sub__(self, o): return self._bin("-", o)
    def __rsub__(self, o): return self._bin("-", o, True)
    def __mul__(self, o): return self._bin("*", o)
    def __rmul__(self, o): return self._bin("*", o, True)
    def __truediv__(self, o): return self._bin("/", o)
    def __rtruediv__(self, o): return self._bin("/", o, True)
    def __mod__(self, o): return self._bin("%", o)
    def __eq__(self, o): return self._bin("=", o)  # type: ignore[override]
    def __ne__(self, o): return self._bin("!=", o)  # type: ignore[override]
    def __lt__(self, o): return self._bin("<", o)
    def __le__(self, o): return self._bin("<=", o)
    def __gt__(self, o): return self._bin(">", o)
    def __ge__(self, o): return self._bin(">=", o)
    def __and__(self, o): return self._bin("AND", o)
    def __rand__(self, o): return self._bin("AND", o, True)
    def __or__(self, o): return self._bin("OR", o)
    def __ror__(self, o): return self._bin("OR", o, True)
    def __invert__(self): return Column(f"(NOT {self.sql})")
    def __neg__(self): return Column(f"(- {self.sql})")
    __hash__ = None  # type: ignore[assignment]

    def __bool__(self):
        raise TypeError("a Column has no truth value: combine conditions with & and |, not 'and'/'or'")

    def alias(self, name: str) -> Column:
        return Column(f"{self.sql} AS `{name}`")

    name = alias

    def cast(self, type_name: str) -> Column:
        return Column(f"CAST({self.sql} AS {type_name})")

    def isin(self, *values) -> Column:
        flat = values[0] if len(values) == 1 and isinstance(values[0], (list, tuple, set)) else values
        return Column(f"({self.sql} IN ({', '.join(to_sql(v) for v in flat)}))")

    def isNull(self) -> Column:
        return Column(f"({self.sql} IS NULL)")

    def isNotNull(self) -> Column:
        return Column(f"({self.sql} IS NOT NULL)")

    def between(self, low, high) -> Column:
        return Column(f"({self.sql} BETWEEN {to_sql(low)} AND {to_sql(high)})")

    def otherwise(self, value) -> Column:
        if not self.sql.startswith("CASE ") or not self.sql.endswith(" END"):
            raise TypeError("otherwise() follows when()")
        return Column(self.sql[:-4] + f" ELSE {to_sql(value)} END")

    def when(self, condition, value) -> Column:
        if not self.sql.startswith("CASE ") or not self.sql.endswith(" END"):
            raise TypeError("when() chains onto when()")
        return Column(self.sql[:-4] + f" WHEN {to_sql(condition)} THEN {to_sql(value)} END")


def col(name: str) -> Column:
    return Column(".".join(f"`{part}`" for part in name.split(".")))


column = col


def lit(value: Any) -> Column:
    return Column(to_sql(value))


def expr(sql: str) -> Column:
    return Column(f"({sql})")


def when(condition, value) -> Column:
    return Column(f"CASE WHEN {to_sql(condition)} THEN {to_sql(value)} END")


def to_sql(value: Any) -> str:
    """SQL text for a Column, a PySpark Column, or a Python literal."""
    if isinstance(value, Column):
        return value.sql
    if type(value).__name__ == "Column" and "pyspark" in type(value).__module__:
        return pyspark_column_sql(value)
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
    raise TypeError(f"cannot use {type(value).__name__} value {value!r} in a column expression")


def pyspark_column_sql(column_obj: Any) -> str:
    """The SQL of a real PySpark Column, read from its repr ``Column<'...'>``."""
    text = repr(column_obj)
    if text.startswith("Column<'") and text.endswith("'>"):
        return text[len("Column<'"):-2]
    raise TypeError(f"cannot read the expression of {text}")


def expression_sql(value: Any, what: str) -> str:
    """A SQL expression string from a str, Column or PySpark Column; TypeError naming ``what`` otherwise."""
    if isinstance(value, str):
        if not value.strip():
            raise TypeError(f"{what}: empty expression")
        return value
    try:
        return to_sql(value) if not isinstance(value, (int, float, bool)) else _not_expr(what, value)
    except TypeError as err:
        raise TypeError(f"{what}: {err}") from None


def _not_expr(what: str, value: Any) -> str:
    raise TypeError(f"{what}: expected a column expression or SQL string, got {value!r}")


def __getattr__(name: str):
    """Any other Spark SQL function by name: ``upper(col('x'))`` -> ``upper(`x`)``."""
    if name.startswith("__"):
        raise AttributeError(name)

    def call(*args) -> Column:
        return Column(f"{name}({', '.join(to_sql(a) for a in args)})")

    call.__name__ = name
    return call
