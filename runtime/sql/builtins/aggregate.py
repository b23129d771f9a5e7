"""Aggregate, grouping, hash and catalog functions. Aggregates and OVER functions are planned by the
aggregation, OVER and Top-N planners (runtime.sql.aggregates, runtime.sql.over, runtime.sql.ranking), which refuse
the rest by name; the SHA family is Spark's sha2 of the right length."""
from sqlglot import exp

from runtime.sql.function_defs import SAME, Function as F, category

PLANNED = "planned by the aggregation"
NOT_YET = "not among the aggregations the planner runs yet"
REDUCED = "in group and window aggregations, reduced to SUM and COUNT as Flink's planner does (not DISTINCT)"
GROUPED = "with GROUPING SETS, ROLLUP or CUBE, in group and window aggregations"

FUNCTIONS = category("aggregate", [
    F("COUNT", "COUNT([ALL] expression | DISTINCT expression) | COUNT(*)", "COUNT(i)", SAME, "BIGINT", PLANNED),
    F("AVG", "AVG([ALL] expression)", "AVG(i)", SAME, "arg0", PLANNED),
    F("SUM", "SUM([ALL] expression)", "SUM(i)", SAME, "-", PLANNED),
    F("MAX", "MAX([ALL] expression)", "MAX(i)", SAME, "arg0", PLANNED),
    F("MIN", "MIN([ALL] expression)", "MIN(i)", SAME, "arg0", PLANNED),
    *[F(name, syntax, example, SAME, "arg0", REDUCED) for name, syntax, example in [
        ("STDDEV_POP", "STDDEV_POP([ALL] expression)", "STDDEV_POP(d)"),
        ("STDDEV_SAMP", "STDDEV_SAMP([ALL] expression) | STDDEV(...)", "STDDEV_SAMP(d)"),
        ("VAR_POP", "VAR_POP([ALL] expression)", "VAR_POP(d)"),
        ("VAR_SAMP", "VAR_SAMP([ALL] expression) | VARIANCE(...)", "VAR_SAMP(d)")]],
    F("ROW_NUMBER", "ROW_NUMBER()", "ROW_NUMBER()", SAME, "BIGINT", "in Top-N and deduplication"),
    F("RANK", "RANK()", "RANK()", SAME, "BIGINT", "in Top-N"),
    F("DENSE_RANK", "DENSE_RANK()", "DENSE_RANK()", SAME, "BIGINT", "in Top-N"),
    F("LAG", "LAG(expression [, offset] [, default])", "LAG(d)", SAME, "arg0", "in OVER"),
    F("FIRST_VALUE", "FIRST_VALUE(expression)", "FIRST_VALUE(d)", SAME, "arg0", "in OVER"),
    F("LAST_VALUE", "LAST_VALUE(expression)", "LAST_VALUE(d)", SAME, "arg0", "in OVER"),
    F("LEAD", "LEAD(expression [, offset] [, default])", "LEAD(d)", None, "-", "Flink refuses it in streaming mode"),
    *[F(name, syntax, example, None, "-", NOT_YET) for name, syntax, example in [
        ("COLLECT", "COLLECT([ALL | DISTINCT] expression)", "COLLECT(d)"),
        ("LISTAGG", "LISTAGG(expression [, separator])", "LISTAGG(s, ',')"),
        ("ARRAY_AGG", "ARRAY_AGG([ALL | DISTINCT] expression [RESPECT | IGNORE NULLS])", "ARRAY_AGG(d)"),
        ("PERCENTILE", "PERCENTILE(expression, percentage [, frequency])", "PERCENTILE(d, 0.5)"),
        ("CUME_DIST", "CUME_DIST()", "CUME_DIST()"), ("PERCENT_RANK", "PERCENT_RANK()", "PERCENT_RANK()"),
        ("NTILE", "NTILE(n)", "NTILE(2)")]],
])
FUNCTIONS += category("grouping", [
    F("GROUP_ID", "GROUP_ID()", "GROUP_ID()", None, "BIGINT", "not among the grouping functions the planner runs yet"),
    F("GROUPING", "GROUPING(expression1 [, expression2]*)", "GROUPING(i)", SAME, "BIGINT", GROUPED),
    F("GROUPING_ID", "GROUPING_ID(expression1 [, expression2]*)", "GROUPING_ID(i)", SAME, "BIGINT", GROUPED),
])
FUNCTIONS += category("hash", [
    F("MD5", "MD5(string)", "MD5(s)", SAME, "STRING"),
    F("SHA1", "SHA1(string)", "SHA1(s)", SAME, "STRING"),
    *[F(f"SHA{bits}", f"SHA{bits}(string)", f"SHA{bits}(s)", f"sha2({{0}}, {bits})", "STRING")
      for bits in (224, 256, 384, 512)],
    F("SHA2", "SHA2(string, hashLength)", "SHA2(s, 256)", SAME, "STRING"),
])
FUNCTIONS += category("catalog", [
    F("CURRENT_DATABASE", "CURRENT_DATABASE()", "CURRENT_DATABASE()",
      lambda n: exp.Literal.string("default_database"), "STRING", "the one database, default_database"),
])
