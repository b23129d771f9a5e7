"""Conditional and type conversion functions. GREATEST and LEAST are NULL when any argument is (Spark's skip
NULLs); IS_ALPHA and IS_DIGIT test every character as Java's Character does."""
from sqlglot import exp

from runtime.sql.function_defs import SAME, Function as F, category


def _null_if_any_null(node: exp.Expr) -> exp.Expr:
    """Spark's function, NULL when any argument is NULL"""
    args = [node.this, *node.expressions]
    test = exp.or_(*[exp.Is(this=a.copy(), expression=exp.Null()) for a in args])
    return exp.If(this=test, true=exp.Null(), false=node.copy())


def _all_chars(pattern: str):
    def rewrite(node: exp.Expr) -> exp.Expr:
        matched = exp.RegexpLike(this=node.expressions[0], expression=exp.Literal.string(pattern))
        return exp.Coalesce(this=matched, expressions=[exp.false()])
    rewrite.__doc__ = f"`COALESCE(x1 RLIKE '{pattern}', FALSE)`"
    return rewrite


FUNCTIONS = category("conditional", [
    F("CASE", "CASE [value] WHEN ... THEN ... [ELSE ...] END", "CASE WHEN i > 0 THEN 'pos' ELSE 'other' END", SAME,
      "-", "one value per WHEN"),
    F("NULLIF", "NULLIF(value1, value2)", "NULLIF(i, 7)", SAME, "arg0"),
    F("COALESCE", "COALESCE(value1 [, value2]*)", "COALESCE(s, t, 'none')", SAME, "-"),
    F("IFNULL", "IFNULL(input, null_replacement)", "IFNULL(s, 'none')", SAME, "-"),
    F("IF", "IF(condition, true_value, false_value)", "IF(i > 3, 'big', 'small')", SAME, "-"),
    F("IS_ALPHA", "IS_ALPHA(string)", "IS_ALPHA(t)", _all_chars("^\\p{L}+$"), "BOOLEAN"),
    F("IS_DIGIT", "IS_DIGIT(string)", "IS_DIGIT(t)", _all_chars("^\\p{Nd}+$"), "BOOLEAN"),
    F("IS_DECIMAL", "IS_DECIMAL(string)", "IS_DECIMAL(t)", None, "BOOLEAN", "Spark has no such test"),
    F("GREATEST", "GREATEST(value1[, value2]*)", "GREATEST(i, j, 3)", _null_if_any_null, "-"),
    F("LEAST", "LEAST(value1[, value2]*)", "LEAST(i, j, 3)", _null_if_any_null, "-"),
])
FUNCTIONS += category("type conversion", [
    F("CAST", "CAST(value AS type)", "CAST(i AS STRING)", SAME, "-", matches=lambda n: not n.args.get("safe")),
    F("TRY_CAST", "TRY_CAST(value AS type)", "TRY_CAST(t AS INT)", SAME, "-", matches=lambda n: n.args.get("safe")),
    F("TYPEOF", "TYPEOF(input[, force_serializable])", "TYPEOF(i)", None, "STRING",
      "Spark's type names are not Flink's"),
])
