"""Arithmetic functions. Spark's own where they agree with Flink; CEIL, FLOOR and SIGN keep their argument's
type as Flink does (Spark's CEIL of a DOUBLE is a BIGINT, its SIGN a DOUBLE)."""
from sqlglot import exp

from runtime.sql.arithmetic import integer_division
from runtime.sql.function_defs import SAME, Function as F, arg_type, cast, category

FLOATS = ("DOUBLE", "FLOAT")


def _same_type(node: exp.Expr) -> exp.Expr:
    """Spark's function, cast back to the argument's type (Flink keeps it)."""
    kept = arg_type(node.this)
    return cast(node, kept) if kept in FLOATS or (node.key == "sign" and kept is not None) else node


def _java_log(node: exp.Expr) -> exp.Expr:
    """Spark's logarithm; of 0 -Infinity and of a negative number NaN, as Java's (Spark's are NULL)"""
    x = node.expression if isinstance(node, exp.Log) and node.expression is not None else node.this
    infinity, nan = cast(exp.Literal.string("-Infinity"), "DOUBLE"), cast(exp.Literal.string("NaN"), "DOUBLE")
    return exp.Case(ifs=[exp.If(this=exp.GT(this=x.copy(), expression=exp.Literal.number(0)), true=node.copy()),
                         exp.If(this=exp.EQ(this=x.copy(), expression=exp.Literal.number(0)), true=infinity)],
                    default=exp.If(this=exp.Is(this=x.copy(), expression=exp.Null()), true=exp.Null(), false=nan))


def _divide(node: exp.Expr) -> exp.Expr:
    """integers: `CAST(x1 DIV x2 AS the wider type)`, truncated toward zero as Flink does; else Spark's /"""
    return integer_division(node, arg_type(node.this), arg_type(node.expression)) or node


def _rand_integer(node: exp.Expr) -> exp.Expr:
    """`CAST(FLOOR(RAND() * x1) AS INT)`"""
    return cast(exp.Floor(this=exp.Mul(this=exp.Rand(), expression=node.expressions[0])), "INT")


def _no_unit(node: exp.Expr) -> bool:
    return node.args.get("to") is None


def _seeded(node: exp.Expr) -> bool:
    return node.this is not None or bool(node.expressions)


FUNCTIONS = category("arithmetic", [
    F("+ (unary)", "+ numeric", "+i", SAME, "arg0"),
    F("- (unary)", "- numeric", "-i", SAME, "arg0"),
    F("+", "numeric1 + numeric2", "i + j", SAME, "-"),
    F("-", "numeric1 - numeric2", "i - j", SAME, "-"),
    F("*", "numeric1 * numeric2", "i * j", SAME, "-"),
    F("/", "numeric1 / numeric2", "i / j", _divide, "-"),
    F("%", "numeric1 % numeric2", "i % j", SAME, "-", "the sign of numeric1, as in Flink"),
    F("MOD", "MOD(numeric1, numeric2)", "MOD(i, 4)", SAME, "-"),
    F("POWER", "POWER(numeric1, numeric2)", "POWER(i, 2)", SAME, "DOUBLE"),
    F("ABS", "ABS(numeric)", "ABS(i)", SAME, "arg0"),
    F("SQRT", "SQRT(numeric)", "SQRT(d)", SAME, "DOUBLE"),
    F("LN", "LN(numeric)", "LN(d)", _java_log, "DOUBLE"),
    F("LOG10", "LOG10(numeric)", "LOG10(d)", _java_log, "DOUBLE"),
    F("LOG2", "LOG2(numeric)", "LOG2(d)", _java_log, "DOUBLE"),
    F("LOG", "LOG(numeric2) | LOG(numeric1, numeric2)", "LOG(2, d)", _java_log, "DOUBLE"),
    F("EXP", "EXP(numeric)", "EXP(d)", SAME, "DOUBLE"),
    F("CEIL", "CEIL(numeric) | CEILING(numeric)", "CEIL(d)", _same_type, "arg0", matches=_no_unit),
    F("FLOOR", "FLOOR(numeric)", "FLOOR(d)", _same_type, "arg0", matches=_no_unit),
    F("SIN", "SIN(numeric)", "SIN(d)", SAME, "DOUBLE"),
    F("SINH", "SINH(numeric)", "SINH(d)", SAME, "DOUBLE"),
    F("COS", "COS(numeric)", "COS(d)", SAME, "DOUBLE"),
    F("TAN", "TAN(numeric)", "TAN(d)", SAME, "DOUBLE"),
    F("TANH", "TANH(numeric)", "TANH(d)", SAME, "DOUBLE"),
    F("COT", "COT(numeric)", "COT(d)", SAME, "DOUBLE"),
    F("ASIN", "ASIN(numeric)", "ASIN(d / 200)", SAME, "DOUBLE"),
    F("ACOS", "ACOS(numeric)", "ACOS(d / 200)", SAME, "DOUBLE"),
    F("ATAN", "ATAN(numeric)", "ATAN(d)", SAME, "DOUBLE"),
    F("ATAN2", "ATAN2(numeric1, numeric2)", "ATAN2(d, i)", SAME, "DOUBLE"),
    F("COSH", "COSH(numeric)", "COSH(d)", SAME, "DOUBLE"),
    F("DEGREES", "DEGREES(numeric)", "DEGREES(d)", SAME, "DOUBLE"),
    F("RADIANS", "RADIANS(numeric)", "RADIANS(d)", SAME, "DOUBLE"),
    F("SIGN", "SIGN(numeric)", "SIGN(i)", _same_type, "arg0"),
    F("ROUND", "ROUND(numeric, int)", "ROUND(d, 1)", SAME, "arg0"),
    F("PI", "PI()", "PI()", SAME, "DOUBLE"),
    F("E", "E()", "E()", SAME, "DOUBLE"),
    F("RAND", "RAND()", "RAND()", SAME, "DOUBLE", "random: its values are Spark's", matches=lambda n: not _seeded(n)),
    F("RAND (seeded)", "RAND(int)", "RAND(42)", None, "DOUBLE", "Spark's seeded sequence is not Flink's",
      matches=_seeded),
    F("RAND_INTEGER", "RAND_INTEGER(int)", "RAND_INTEGER(10)", _rand_integer, "INT", "random: its values are Spark's",
      matches=lambda n: len(n.expressions) == 1),
    F("RAND_INTEGER (seeded)", "RAND_INTEGER(int1, int2)", "RAND_INTEGER(42, 10)", None, "INT",
      "Spark's seeded sequence is not Flink's", matches=lambda n: len(n.expressions) == 2),
    F("UUID", "UUID()", "UUID()", SAME, "STRING", "random"),
    F("BIN", "BIN(int)", "BIN(i)", SAME, "STRING"),
    F("HEX", "HEX(numeric) | HEX(string)", "HEX(i)", SAME, "STRING"),
    F("TRUNCATE", "TRUNCATE(numeric1[, integer2])", "TRUNCATE(d, 1)", None, "arg0",
      "Spark has no truncation of numbers to decimal places"),
])
