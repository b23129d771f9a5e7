"""String functions. Most are Spark's own with Flink's meaning; SPLIT and SPLIT_INDEX split at a literal
delimiter (Spark's split takes a regular expression), FROM_BASE64 gives a string, STR_TO_MAP defaults to
Flink's delimiters."""
from sqlglot import exp

from runtime.sql.function_defs import SAME, Function as F, call, cast, category


def _literal_split(text: exp.Expr, separator: exp.Expr) -> exp.Expr:
    quoted = exp.Concat(expressions=[exp.Literal.string("\\Q"), separator, exp.Literal.string("\\E")])
    return call("split", text, quoted)


def _split_index(node: exp.Expr) -> exp.Expr:
    """`try_element_at(split(x1, literally x2), x3 + 1)`: NULL past the end or below 0"""
    text, separator, index = node.expressions
    one = exp.Add(this=index, expression=exp.Literal.number(1))
    return exp.If(this=exp.LT(this=index, expression=exp.Literal.number(0)), true=exp.Null(),
                  false=call("try_element_at", _literal_split(text, separator), one))


def _split(node: exp.Expr) -> exp.Expr:
    """`split(x1, literally x2)`"""
    return _literal_split(node.this, node.expression)


def _extract_or_null(node: exp.Expr) -> exp.Expr:
    """Spark's regexp_extract, NULL when nothing matches (Spark's is '')"""
    return exp.If(this=exp.RegexpLike(this=node.this.copy(), expression=node.expression.copy()), true=node,
                  false=exp.Null())


def _from_base64(node: exp.Expr) -> exp.Expr:
    """`CAST(unbase64(x1) AS STRING)`"""
    return cast(call("unbase64", node.this), "STRING")


def _str_to_map(node: exp.Expr) -> exp.Expr:
    """`str_to_map(x1, x2 or ',', x3 or '=')`"""
    args = node.expressions
    return call("str_to_map", args[0], *(args[1:] + [exp.Literal.string(","), exp.Literal.string("=")][len(args) - 1:]))


def _first_byte(node: exp.Expr) -> exp.Expr:
    """the first byte of the UTF-8 encoding, signed (Flink's), 0 for ''"""
    byte = cast(call("conv", exp.Substring(this=exp.Hex(this=node.this), start=exp.Literal.number(1),
                                             length=exp.Literal.number(2)),
                     exp.Literal.number(16), exp.Literal.number(10)), "INT")
    signed = exp.If(this=exp.GT(this=byte, expression=exp.Literal.number(127)),
                    true=exp.Sub(this=byte.copy(), expression=exp.Literal.number(256)), false=byte.copy())
    return exp.If(this=exp.EQ(this=node.this.copy(), expression=exp.Literal.string("")), true=exp.Literal.number(0),
                  false=signed)


FUNCTIONS = category("string", [
    F("||", "string1 || string2", "s || t", SAME, "STRING"),
    F("CHAR_LENGTH", "CHAR_LENGTH(string) | CHARACTER_LENGTH(string)", "CHAR_LENGTH(s)", SAME, "INT"),
    F("UPPER", "UPPER(string)", "UPPER(s)", SAME, "STRING"),
    F("LOWER", "LOWER(string)", "LOWER(s)", SAME, "STRING"),
    F("POSITION", "POSITION(string1 IN string2)", "POSITION(t IN s)", SAME, "INT"),
    F("TRIM", "TRIM([BOTH | LEADING | TRAILING] string1 FROM string2)", "TRIM(BOTH 'a' FROM t)", SAME, "STRING"),
    F("LTRIM", "LTRIM(string)", "LTRIM(s)", SAME, "STRING"),
    F("RTRIM", "RTRIM(string)", "RTRIM(s)", SAME, "STRING"),
    F("BTRIM", "BTRIM(string[, trimStr])", "BTRIM(s)", SAME, "STRING"),
    F("REPEAT", "REPEAT(string, int)", "REPEAT(t, 2)", SAME, "STRING"),
    F("REGEXP_REPLACE", "REGEXP_REPLACE(string1, string2, string3)", "REGEXP_REPLACE(s, '[aeiou]', '*')", SAME,
      "STRING"),
    F("OVERLAY", "OVERLAY(string1 PLACING string2 FROM integer1 [FOR integer2])", "OVERLAY(s PLACING 'xy' FROM 2)",
      SAME, "STRING"),
    F("SUBSTRING", "SUBSTRING(string FROM integer1 [FOR integer2])", "SUBSTRING(s FROM 2 FOR 3)", SAME, "STRING"),
    F("SUBSTR", "SUBSTR(string, integer1[, integer2])", "SUBSTR(s, 2)", SAME, "STRING"),
    F("REPLACE", "REPLACE(string1, string2, string3)", "REPLACE(s, 'o', '0')", SAME, "STRING"),
    F("REGEXP_EXTRACT", "REGEXP_EXTRACT(string1, string2[, integer])", "REGEXP_EXTRACT(s, '([a-z]+)', 1)",
      _extract_or_null, "STRING"),
    F("REGEXP_EXTRACT_ALL", "REGEXP_EXTRACT_ALL(str, regex[, extractIndex])", "REGEXP_EXTRACT_ALL(s, '([a-z]+)', 1)",
      SAME, "ARRAY<STRING>"),
    F("REGEXP_COUNT", "REGEXP_COUNT(str, regex)", "REGEXP_COUNT(s, '[a-z]')", SAME, "INT"),
    F("REGEXP_INSTR", "REGEXP_INSTR(str, regex)", "REGEXP_INSTR(s, '[a-z]+')", SAME, "INT"),
    F("REGEXP_SUBSTR", "REGEXP_SUBSTR(str, regex)", "REGEXP_SUBSTR(s, '[a-z]+')", SAME, "STRING"),
    F("REGEXP", "REGEXP(string1, string2)", "REGEXP(s, '^[A-Z]')", SAME, "BOOLEAN"),
    F("INITCAP", "INITCAP(string)", "INITCAP(s)", None, "STRING",
      "Flink capitalizes runs of ASCII letters and digits only (Spark any word, and 'ß' as 'Ss')"),
    F("CONCAT", "CONCAT(string1, string2, ...)", "CONCAT(s, '-', t)", SAME, "STRING"),
    F("CONCAT_WS", "CONCAT_WS(string1, string2, string3, ...)", "CONCAT_WS('~', s, t)", SAME, "STRING"),
    F("LPAD", "LPAD(string1, integer, string2)", "LPAD(t, 4, '?')", SAME, "STRING"),
    F("RPAD", "RPAD(string1, integer, string2)", "RPAD(t, 4, '?')", SAME, "STRING"),
    F("FROM_BASE64", "FROM_BASE64(string)", "FROM_BASE64(TO_BASE64(s))", _from_base64, "STRING"),
    F("TO_BASE64", "TO_BASE64(string)", "TO_BASE64(s)", SAME, "STRING"),
    F("ASCII", "ASCII(string)", "ASCII(s)", _first_byte, "INT"),
    F("CHR", "CHR(integer)", "CHR(i + 90)", SAME, "STRING"),
    F("DECODE", "DECODE(binary, string)", "DECODE(ENCODE(s, 'UTF-8'), 'UTF-8')", SAME, "STRING"),
    F("ENCODE", "ENCODE(string1, string2)", "ENCODE(s, 'UTF-8')", SAME, "BINARY"),
    F("INSTR", "INSTR(string1, string2)", "INSTR(s, t)", SAME, "INT"),
    F("LEFT", "LEFT(string, integer)", "LEFT(s, 3)", SAME, "STRING"),
    F("RIGHT", "RIGHT(string, integer)", "RIGHT(s, 3)", SAME, "STRING"),
    F("LOCATE", "LOCATE(string1, string2[, integer])", "LOCATE(t, s, 2)", SAME, "INT"),
    F("PARSE_URL", "PARSE_URL(string1, string2[, string3])", "PARSE_URL('http://x.org/a?k=v#r', 'QUERY', 'k')", SAME,
      "STRING"),
    F("REVERSE", "REVERSE(string)", "REVERSE(s)", SAME, "STRING"),
    F("SPLIT_INDEX", "SPLIT_INDEX(string1, string2, integer1)", "SPLIT_INDEX(s, t, 1)", _split_index, "STRING"),
    F("SPLIT", "SPLIT(string, delimiter)", "SPLIT(s, t)", _split, "ARRAY<STRING>"),
    F("STR_TO_MAP", "STR_TO_MAP(string1[, string2, string3])", "STR_TO_MAP('a=1,b=2')", _str_to_map,
      "MAP<STRING, STRING>"),
    F("ELT", "ELT(index, expr[, exprs]*)", "ELT(2, s, t)", SAME, "STRING"),
    F("STARTSWITH", "STARTSWITH(expr, startExpr)", "STARTSWITH(s, t)", SAME, "BOOLEAN"),
    F("ENDSWITH", "ENDSWITH(expr, endExpr)", "ENDSWITH(s, t)", SAME, "BOOLEAN"),
    F("PRINTF", "PRINTF(format[, obj]*)", "PRINTF('%s=%d', t, i)", SAME, "STRING"),
    F("TRANSLATE", "TRANSLATE(expr, fromStr, toStr)", "TRANSLATE(s, 'lo', 'LO')", SAME, "STRING"),
    F("UNHEX", "UNHEX(expr)", "UNHEX('466C696E6B')", SAME, "BINARY"),
    F("URL_ENCODE", "URL_ENCODE(string)", "URL_ENCODE(s)", SAME, "STRING"),
    F("URL_DECODE", "URL_DECODE(string)", "URL_DECODE(URL_ENCODE(s))", SAME, "STRING"),
    F("INET_ATON", "INET_ATON(string)", "INET_ATON('127.0.0.1')", None, "BIGINT", "Spark has no such function"),
    F("INET_NTOA", "INET_NTOA(integer)", "INET_NTOA(2130706433)", None, "STRING", "Spark has no such function"),
])
