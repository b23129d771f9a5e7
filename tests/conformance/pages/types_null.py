"""Flink's type semantics, part 3: NULL in comparisons, IN, logic, functions and aggregates."""
from tests.conformance.pages import Case

PAGE = "Types: NULL semantics"
CASES = [
    Case("comparisons with null", "SELECT id, a = b AS eq, a <> b AS ne, a > b AS gt FROM numbers"),
    Case("in list with null", "SELECT id, a IN (7, CAST(NULL AS INT)) AS i, a NOT IN (7, CAST(NULL AS INT)) AS n "
                              "FROM numbers"),
    Case("three-valued logic", "SELECT id, a > 0 AND b > 0 AS both_pos, a > 0 OR b > 0 AS one_pos, "
                               "NOT (b > 0) AS not_pos FROM numbers"),
    Case("is distinct from", "SELECT id, a IS DISTINCT FROM b AS d, a IS NOT DISTINCT FROM 7 AS s FROM numbers"),
    Case("nullif", "SELECT id, NULLIF(a, 7) AS x FROM numbers"),
    Case("coalesce of several", "SELECT id, COALESCE(a, b, -1) AS x FROM numbers"),
    Case("concat with null", "SELECT order_id, CONCAT(product, '-', CAST(quantity AS STRING)) AS c FROM orders"),
    Case("concat_ws skips null", "SELECT order_id, CONCAT_WS('/', product, CAST(quantity AS STRING)) AS c FROM orders"),
    Case("aggregates skip null", "SELECT COUNT(*) AS n, COUNT(a) AS na, SUM(a) AS s, MIN(s) AS lo, MAX(s) AS hi "
                                 "FROM numbers WHERE id > 5"),
    Case("sum of nothing is null", "SELECT SUM(a) AS s, COUNT(a) AS n, MAX(d) AS m FROM numbers WHERE id = 7"),
    Case("null group key", "SELECT tier, COUNT(*) AS n FROM customers GROUP BY tier"),
    Case("case on null", "SELECT id, CASE a WHEN 7 THEN 'seven' WHEN 0 THEN 'zero' ELSE 'other' END AS c "
                         "FROM numbers"),
    Case("where null comparison drops rows", "SELECT id FROM numbers WHERE a = NULL OR b <> b"),
    Case("is true and is unknown", "SELECT id, (a > b) IS TRUE AS t, (a > b) IS UNKNOWN AS u FROM numbers"),
    Case("average ignores null", "SELECT AVG(discount) AS d, AVG(quantity) AS q FROM orders"),
]
