"""Flink SQL reference, Queries > SELECT & WHERE clause (and VALUES)."""
from tests.conformance.pages import Case

PAGE = "SELECT & WHERE"
CASES = [
    Case("select columns", "SELECT order_id, product, quantity FROM orders"),
    Case("select star", "SELECT * FROM customers"),
    Case("where greater", "SELECT order_id, quantity FROM orders WHERE quantity > 3"),
    Case("where or is null", "SELECT order_id, quantity FROM orders WHERE quantity < 0 OR quantity IS NULL"),
    Case("where non-ascii equals", "SELECT order_id, product FROM orders WHERE product = 'café'"),
    Case("where like", "SELECT order_id, product FROM orders WHERE product LIKE '%e%'"),
    Case("where not like", "SELECT order_id, product FROM orders WHERE product NOT LIKE 'Z%'"),
    Case("where between", "SELECT order_id, quantity FROM orders WHERE quantity BETWEEN -1 AND 2"),
    Case("where in list", "SELECT order_id, customer_id FROM orders WHERE customer_id IN (1, 3, 5)"),
    Case("where not in list", "SELECT order_id, customer_id FROM orders WHERE customer_id NOT IN (1, 3)"),
    Case("where not", "SELECT order_id FROM orders WHERE NOT (quantity > 0)"),
    Case("arithmetic projection", "SELECT order_id, quantity * 2 + 1 AS q FROM orders"),
    Case("case when", "SELECT order_id, CASE WHEN quantity < 0 THEN 'return' WHEN quantity = 0 THEN 'none' "
                      "ELSE 'sale' END AS kind FROM orders"),
    Case("coalesce", "SELECT order_id, COALESCE(product, 'unknown') AS p FROM orders"),
    Case("string functions on non-ascii", "SELECT order_id, UPPER(product) AS u, CHAR_LENGTH(product) AS n "
                                          "FROM orders"),
    Case("decimal times int", "SELECT order_id, price * quantity AS total FROM orders"),
    Case("where timestamp literal", "SELECT order_id, ts FROM orders WHERE ts >= TIMESTAMP '2024-03-01 09:00:20'"),
    Case("date and hour", "SELECT order_id, CAST(ts AS DATE) AS d, HOUR(ts) AS h FROM orders WHERE order_id < 6"),
    Case("null-aware filter", "SELECT name, country FROM customers WHERE country IS NOT NULL AND tier <> 'gold'"),
    Case("negation", "SELECT order_id, discount, -discount AS neg FROM orders WHERE discount IS NOT NULL"),
    Case("values", "SELECT * FROM (VALUES (1, 'a'), (2, 'ü')) AS t(x, y)"),
    Case("concatenation", "SELECT order_id, product || '!' AS p FROM orders"),
    Case("if function", "SELECT order_id, IF(quantity > 0, 'pos', 'other') AS sign FROM orders"),
    Case("substring of non-ascii", "SELECT order_id, SUBSTRING(product, 2, 3) AS part FROM orders"),
    Case("position", "SELECT order_id, POSITION('e' IN product) AS at_e FROM orders"),
    Case("boolean column", "SELECT order_id, quantity > 2 AND discount > 0 AS good FROM orders"),
    Case("select from view", "SELECT order_id, net FROM order_lines WHERE net > 0"),
]
VIEWS = ["CREATE VIEW order_lines AS SELECT order_id, customer_id, quantity * price AS net FROM orders"]
