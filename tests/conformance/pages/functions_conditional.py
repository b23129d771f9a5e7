"""Flink SQL reference, System (Built-in) Functions > Comparison, Logical, Conditional and Type Conversion
Functions, with NULLs in every column they read."""
from tests.conformance.pages import Case

PAGE = "Functions: comparison, logical, conditional, conversion"
CASES = [
    Case("fn comparisons with nulls", "SELECT order_id, quantity > 2 AS big, quantity IS NULL AS no_quantity, "
                                      "customer_id IS DISTINCT FROM 3 AS not3, product IN ('pear', 'café') AS fav "
                                      "FROM orders"),
    Case("fn between and like", "SELECT order_id FROM orders WHERE quantity BETWEEN 0 AND 4 AND product NOT LIKE 'p%'"),
    Case("fn logical three valued", "SELECT order_id, (quantity > 2) AND (discount > 0) AS both_, (quantity > 2) OR "
                                    "(discount > 0) AS either, (discount > 0) IS NOT TRUE AS nt FROM orders"),
    Case("fn case and if", "SELECT order_id, CASE WHEN quantity > 5 THEN 'many' WHEN quantity > 0 THEN 'some' ELSE "
                           "'none' END AS band, IF(discount > 0.3, 'deal', 'full') AS kind FROM orders"),
    Case("fn coalesce nullif ifnull", "SELECT order_id, COALESCE(product, 'unknown') AS p, NULLIF(quantity, 0) AS q, "
                                      "IFNULL(discount, 0.0) AS d FROM orders"),
    Case("fn greatest least", "SELECT id, GREATEST(a, b, 0) AS g, LEAST(a, b) AS l FROM numbers"),
    Case("fn try cast", "SELECT id, TRY_CAST(s AS INT) AS i, TRY_CAST(s AS DOUBLE) AS d FROM numbers"),
    Case("fn cast to string", "SELECT order_id, CAST(quantity AS STRING) AS q, CAST(order_id AS BIGINT) AS big "
                              "FROM orders"),
    Case("fn is alpha digit", "SELECT id, IS_DIGIT(s) AS digits, IS_ALPHA(s) AS letters FROM numbers"),
]
