"""Collection, JSON, value construction and value access functions. An element is read with Spark's 1-based
``try_element_at`` (NULL when absent, as in Flink); ARRAY_POSITION is an INT, ARRAY_REVERSE Spark's reverse.
Flink's JSON functions follow SQL/JSON paths and keep object key order: Spark's JSON functions do neither,
so they are refused."""
from sqlglot import exp

from runtime.sql.function_defs import SAME, Function as F, call, cast, category


def _element(node: exp.Expr) -> exp.Expr:
    """`try_element_at(x1, x2)`: 1-based for arrays, by key for maps; NULL when absent"""
    return call("try_element_at", node.this, node.expressions[0])


def _map(node: exp.Expr) -> exp.Expr:
    """`map(k1, v1, ...)`"""
    return call("map", *node.expressions)


def _row(node: exp.Expr) -> exp.Expr:
    """`named_struct('EXPR$0', x1, 'EXPR$1', x2, ...)`: Flink's field names"""
    return call("named_struct", *[part for i, value in enumerate(node.expressions)
                                  for part in (exp.Literal.string(f"EXPR${i}"), value)])


def _contains(node: exp.Expr) -> exp.Expr:
    """NULL-safe membership: NULL only for a NULL array (Spark's is NULL when not found among NULLs)"""
    element = exp.Lambda(this=exp.NullSafeEQ(this=exp.to_identifier("e"), expression=node.expression),
                         expressions=[exp.to_identifier("e")])
    return exp.If(this=exp.Is(this=node.this, expression=exp.Null()), true=exp.Null(),
                  false=call("exists", node.this.copy(), element))


def _sole(node: exp.Expr) -> exp.Expr:
    """NULL when empty, the element when one, an error when more"""
    array = node.expressions[0]
    size = call("size", array)
    return exp.Case(ifs=[exp.If(this=exp.EQ(this=size, expression=exp.Literal.number(0)), true=exp.Null()),
                         exp.If(this=exp.EQ(this=size.copy(), expression=exp.Literal.number(1)),
                                true=call("element_at", array.copy(), exp.Literal.number(1)))],
                    default=call("raise_error", exp.Literal.string("ELEMENT: the array has more than one element")))


FUNCTIONS = category("collection", [
    F("CARDINALITY", "CARDINALITY(array) | CARDINALITY(map)", "CARDINALITY(ARRAY[i, j])", SAME, "INT"),
    F("array[i]", "array '[' INT ']' | map '[' key ']'", "ARRAY[id, 5][2]", _element, "-",
      matches=lambda n: len(n.expressions) == 1),
    F("ELEMENT", "ELEMENT(array)", "ELEMENT(ARRAY[id])", _sole, "-"),
    F("ARRAY_CONTAINS", "ARRAY_CONTAINS(haystack, needle)", "ARRAY_CONTAINS(ARRAY[i, j], 7)", _contains, "BOOLEAN"),
    F("ARRAY_DISTINCT", "ARRAY_DISTINCT(haystack)", "ARRAY_DISTINCT(ARRAY[id, 2, id])", SAME, "-"),
    F("ARRAY_POSITION", "ARRAY_POSITION(haystack, needle)", "ARRAY_POSITION(ARRAY[1, 3, 5], id)",
      lambda n: cast(n, "INT"), "INT"),
    F("ARRAY_REMOVE", "ARRAY_REMOVE(haystack, needle)", "ARRAY_REMOVE(ARRAY[id, 2, 3], 3)", SAME, "-"),
    F("ARRAY_REVERSE", "ARRAY_REVERSE(haystack)", "ARRAY_REVERSE(ARRAY[id, 2])", "reverse({0})", "-"),
    F("ARRAY_APPEND", "ARRAY_APPEND(array, element)", "ARRAY_APPEND(ARRAY[id], 9)", SAME, "-"),
    F("ARRAY_PREPEND", "ARRAY_PREPEND(array, element)", "ARRAY_PREPEND(ARRAY[id], 9)", SAME, "-"),
    F("ARRAY_CONCAT", "ARRAY_CONCAT(array1, ...)", "ARRAY_CONCAT(ARRAY[id], ARRAY[4, 5])", SAME, "-"),
    F("ARRAY_EXCEPT", "ARRAY_EXCEPT(array1, array2)", "ARRAY_EXCEPT(ARRAY[id, 2, 2, 3], ARRAY[3])", SAME, "-"),
    F("ARRAY_INTERSECT", "ARRAY_INTERSECT(array1, array2)", "ARRAY_INTERSECT(ARRAY[id, 2, 3, 3], ARRAY[3, 1])", SAME, "-"),
    F("ARRAY_UNION", "ARRAY_UNION(array1, array2)", "ARRAY_UNION(ARRAY[id, 2, 2], ARRAY[2, 4])", SAME, "-"),
    F("ARRAY_JOIN", "ARRAY_JOIN(array, delimiter[, nullReplacement])", "ARRAY_JOIN(ARRAY[s, t], '+')", SAME, "STRING"),
    F("ARRAY_MAX", "ARRAY_MAX(array)", "ARRAY_MAX(ARRAY[i, j])", SAME, "-"),
    F("ARRAY_MIN", "ARRAY_MIN(array)", "ARRAY_MIN(ARRAY[i, j])", SAME, "-"),
    F("ARRAY_SLICE", "ARRAY_SLICE(array, start_offset[, end_offset])", "ARRAY_SLICE(ARRAY[i, j, 3], 2, 3)", None,
      "-", "Spark's slice counts a length, from other offsets"),
    F("ARRAY_SORT", "ARRAY_SORT(array[, ascending_order[, null_first]])", "ARRAY_SORT(ARRAY[i, j, 3])", None, "-",
      "NULLs are ordered otherwise in Spark"),
    F("MAP_KEYS", "MAP_KEYS(map)", "MAP_KEYS(MAP['k', i, 'l', id])", SAME, "-"),
    F("MAP_VALUES", "MAP_VALUES(map)", "MAP_VALUES(MAP['k', id, 'l', 2])", SAME, "-"),
    F("MAP_ENTRIES", "MAP_ENTRIES(map)", "MAP_ENTRIES(MAP['k', id])", SAME, "-"),
    F("MAP_FROM_ARRAYS", "MAP_FROM_ARRAYS(array_of_keys, array_of_values)", "MAP_FROM_ARRAYS(ARRAY['a', 'b'], ARRAY[id, 2])",
      SAME, "-"),
    F("MAP_UNION", "MAP_UNION(map1, ...)", "MAP_UNION(MAP[s, i], MAP[t, j])", None, "-",
      "Spark's map_concat fails on a repeated key"),
])
FUNCTIONS += category("JSON", [
    F("IS JSON", "string IS JSON [VALUE | SCALAR | ARRAY | OBJECT]", "t IS JSON", None, "BOOLEAN",
      "Spark's JSON functions differ (paths, key order)", matches=lambda n: isinstance(n.expression, exp.JSON)),
    *[F(name, syntax, None, None, "-", "Spark's JSON functions differ (paths, key order)") for name, syntax in [
        ("JSON_EXISTS", "JSON_EXISTS(jsonValue, path [...])"), ("JSON_STRING", "JSON_STRING(value)"),
        ("JSON_VALUE", "JSON_VALUE(jsonValue, path [...])"), ("JSON_QUERY", "JSON_QUERY(jsonValue, path [...])"),
        ("JSON_OBJECT", "JSON_OBJECT([[KEY] key VALUE value]* [...])"), ("JSON_ARRAY", "JSON_ARRAY([value]* [...])"),
        ("JSON_QUOTE", "JSON_QUOTE(string)"), ("JSON_UNQUOTE", "JSON_UNQUOTE(string)"),
        ("JSON_OBJECTAGG", "JSON_OBJECTAGG([KEY] key VALUE value [...])"), ("JSON_ARRAYAGG", "JSON_ARRAYAGG(items [...])")]]
])
FUNCTIONS += category("value construction", [
    F("ROW", "ROW(value1 [, value2]*) | (value1, value2 [, value3]*)", "ROW(id, 'x')", _row, "-"),
    F("ARRAY", "ARRAY '[' value1 [, value2]* ']'", "ARRAY[id, 2]", SAME, "-"),
    F("MAP", "MAP '[' key1, value1 [, key2, value2]* ']'", "MAP['a', id, 'b', 2]", _map, "-"),
])
FUNCTIONS += category("value access", [
    F("composite.field", "tableName.compositeType.field", None, SAME, "-"),
    F("composite.*", "tableName.compositeType.*", None, None, "-", "not supported"),
])
