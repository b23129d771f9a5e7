"""Collection, JSON, value construction and value access functions. An element is read with Spark's 1-based
``try_element_at`` (NULL when absent, as in Flink); ARRAY_POSITION is an INT, ARRAY_REVERSE Spark's reverse.
Flink's JSON functions follow SQL/JSON paths and keep object key order: Spark's JSON functions do neither,
so they are refused."""
from sqlglot import exp

from runtime.sql.functions import SAME, Function as F, call, cast, category


def _is_map_constructor(node: exp.Expr) -> bool:
    return isinstance(node.this, exp.Column) and node.this.name.upper() == "MAP" and not node.this.table


def _element(node: exp.Expr) -> exp.Expr:
    """`try_element_at(x1, x2)`: 1-based for arrays, by key for maps; NULL when absent"""
    return call("try_element_at", node.this, node.expressions[0])


def _map(node: exp.Expr) -> exp.Expr:
    """`map(k1, v1, ...)`"""
    return call("map", *node.expressions)


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
    F("array[i]", "array '[' INT ']' | map '[' key ']'", "ARRAY[i, j][2]", _element, "-",
      matches=lambda n: len(n.expressions) == 1 and not _is_map_constructor(n)),
    F("ELEMENT", "ELEMENT(array)", "ELEMENT(ARRAY[i])", _sole, "-"),
    F("ARRAY_CONTAINS", "ARRAY_CONTAINS(haystack, needle)", "ARRAY_CONTAINS(ARRAY[i, j], 7)", SAME, "BOOLEAN"),
    F("ARRAY_DISTINCT", "ARRAY_DISTINCT(haystack)", "ARRAY_DISTINCT(ARRAY[i, j, i])", SAME, "-"),
    F("ARRAY_POSITION", "ARRAY_POSITION(haystack, needle)", "ARRAY_POSITION(ARRAY[i, j], j)",
      lambda n: cast(n, "INT"), "INT"),
    F("ARRAY_REMOVE", "ARRAY_REMOVE(haystack, needle)", "ARRAY_REMOVE(ARRAY[i, j, 7], 7)", SAME, "-"),
    F("ARRAY_REVERSE", "ARRAY_REVERSE(haystack)", "ARRAY_REVERSE(ARRAY[i, j])", "reverse({0})", "-"),
    F("ARRAY_APPEND", "ARRAY_APPEND(array, element)", "ARRAY_APPEND(ARRAY[i], j)", SAME, "-"),
    F("ARRAY_PREPEND", "ARRAY_PREPEND(array, element)", "ARRAY_PREPEND(ARRAY[i], j)", SAME, "-"),
    F("ARRAY_CONCAT", "ARRAY_CONCAT(array1, ...)", "ARRAY_CONCAT(ARRAY[i], ARRAY[j])", SAME, "-"),
    F("ARRAY_EXCEPT", "ARRAY_EXCEPT(array1, array2)", "ARRAY_EXCEPT(ARRAY[i, j], ARRAY[j])", SAME, "-"),
    F("ARRAY_INTERSECT", "ARRAY_INTERSECT(array1, array2)", "ARRAY_INTERSECT(ARRAY[i, j], ARRAY[j])", SAME, "-"),
    F("ARRAY_UNION", "ARRAY_UNION(array1, array2)", "ARRAY_UNION(ARRAY[i, j], ARRAY[j, 1])", SAME, "-"),
    F("ARRAY_JOIN", "ARRAY_JOIN(array, delimiter[, nullReplacement])", "ARRAY_JOIN(ARRAY[s, t], '+')", SAME, "STRING"),
    F("ARRAY_MAX", "ARRAY_MAX(array)", "ARRAY_MAX(ARRAY[i, j])", SAME, "-"),
    F("ARRAY_MIN", "ARRAY_MIN(array)", "ARRAY_MIN(ARRAY[i, j])", SAME, "-"),
    F("ARRAY_SLICE", "ARRAY_SLICE(array, start_offset[, end_offset])", "ARRAY_SLICE(ARRAY[i, j, 3], 2, 3)", None,
      "-", "Spark's slice counts a length, from other offsets"),
    F("ARRAY_SORT", "ARRAY_SORT(array[, ascending_order[, null_first]])", "ARRAY_SORT(ARRAY[i, j, 3])", None, "-",
      "NULLs are ordered otherwise in Spark"),
    F("MAP_KEYS", "MAP_KEYS(map)", "MAP_KEYS(MAP[s, i])", SAME, "-"),
    F("MAP_VALUES", "MAP_VALUES(map)", "MAP_VALUES(MAP[s, i])", SAME, "-"),
    F("MAP_ENTRIES", "MAP_ENTRIES(map)", "MAP_ENTRIES(MAP[s, i])", SAME, "-"),
    F("MAP_FROM_ARRAYS", "MAP_FROM_ARRAYS(array_of_keys, array_of_values)", "MAP_FROM_ARRAYS(ARRAY[s], ARRAY[i])",
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
    F("ROW", "ROW(value1 [, value2]*) | (value1, value2 [, value3]*)", "ROW(i, s)", "struct({0}, {1})", "-",
      "two fields"),
    F("ARRAY", "ARRAY '[' value1 [, value2]* ']'", "ARRAY[i, j]", SAME, "-"),
    F("MAP", "MAP '[' key1, value1 [, key2, value2]* ']'", "MAP['a', i, 'b', j]", _map, "-",
      matches=_is_map_constructor),
])
FUNCTIONS += category("value access", [
    F("composite.field", "tableName.compositeType.field", None, SAME, "-"),
    F("composite.*", "tableName.compositeType.*", None, None, "-", "not supported"),
])
