"""Comparison and logical functions: Spark's operators mean Flink's (three-valued logic, NULL semantics)."""
from sqlglot import exp

from runtime.sql.function_defs import SAME, Function as F, category


def _boolean(node: exp.Expr) -> bool:
    return isinstance(node.expression, exp.Boolean)


FUNCTIONS = category("comparison", [
    F("=", "value1 = value2", "i = j", SAME, "BOOLEAN"),
    F("<>", "value1 <> value2", "i <> j", SAME, "BOOLEAN"),
    F(">", "value1 > value2", "i > j", SAME, "BOOLEAN"),
    F(">=", "value1 >= value2", "i >= j", SAME, "BOOLEAN"),
    F("<", "value1 < value2", "i < j", SAME, "BOOLEAN"),
    F("<=", "value1 <= value2", "i <= j", SAME, "BOOLEAN"),
    F("IS NULL", "value IS NULL", "s IS NULL", SAME, "BOOLEAN", matches=lambda n: isinstance(n.expression, exp.Null)),
    F("IS NOT NULL", "value IS NOT NULL", "s IS NOT NULL", SAME, "BOOLEAN"),
    F("IS DISTINCT FROM", "value1 IS DISTINCT FROM value2", "i IS DISTINCT FROM j", SAME, "BOOLEAN"),
    F("IS NOT DISTINCT FROM", "value1 IS NOT DISTINCT FROM value2", "i IS NOT DISTINCT FROM j", SAME, "BOOLEAN"),
    F("BETWEEN", "value1 [NOT] BETWEEN [ASYMMETRIC | SYMMETRIC] value2 AND value3", "i BETWEEN j AND 10", SAME,
      "BOOLEAN"),
    F("LIKE", "string1 [NOT] LIKE string2", "s LIKE '%o%'", SAME, "BOOLEAN", "no ESCAPE, as in Flink"),
    F("SIMILAR TO", "string1 [NOT] SIMILAR TO string2", "s SIMILAR TO 'a%'", None, "BOOLEAN",
      "Spark has no SQL regular expressions of this kind"),
    F("IN", "value1 [NOT] IN (value2 [, value3]*)", "i IN (1, 7, 15)", SAME, "BOOLEAN"),
    F("EXISTS", "EXISTS (sub-query)", "EXISTS (SELECT 1)", SAME, "BOOLEAN", "planned with the query's subqueries"),
])
FUNCTIONS += category("logical", [
    F("OR", "boolean1 OR boolean2", "flag OR i > 3", SAME, "BOOLEAN"),
    F("AND", "boolean1 AND boolean2", "flag AND i > 3", SAME, "BOOLEAN"),
    F("NOT", "NOT boolean", "NOT flag", SAME, "BOOLEAN"),
    F("IS [NOT] TRUE", "boolean IS [NOT] TRUE", "flag IS TRUE", SAME, "BOOLEAN", matches=_boolean),
    F("IS [NOT] FALSE", "boolean IS [NOT] FALSE", "flag IS FALSE", SAME, "BOOLEAN", matches=_boolean),
    F("IS [NOT] UNKNOWN", "boolean IS [NOT] UNKNOWN", "flag IS UNKNOWN", SAME, "BOOLEAN",
      matches=lambda n: isinstance(n.expression, exp.Null)),
])
