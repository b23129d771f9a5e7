"""Flink SQL reference, Queries > WITH clause and SELECT DISTINCT."""
from tests.conformance.pages import Case

PAGE = "WITH & SELECT DISTINCT"
CASES = [
    Case("with one", "WITH big AS (SELECT * FROM orders WHERE quantity > 5) SELECT order_id, quantity FROM big"),
    Case("with chained", "WITH a AS (SELECT order_id, quantity FROM orders WHERE quantity > 0), b AS (SELECT "
                         "order_id, quantity * 10 AS q FROM a) SELECT * FROM b WHERE q > 40"),
    Case("with aggregate", "WITH totals AS (SELECT customer_id, SUM(quantity) AS q FROM orders GROUP BY customer_id) "
                           "SELECT customer_id, q FROM totals WHERE q > 10"),
    Case("distinct one column", "SELECT DISTINCT product FROM orders"),
    Case("distinct two columns", "SELECT DISTINCT customer_id, product FROM orders"),
    Case("distinct with null", "SELECT DISTINCT tier FROM customers"),
    Case("distinct expression", "SELECT DISTINCT quantity > 0 AS positive FROM orders"),
    Case("count distinct", "SELECT COUNT(DISTINCT product) AS n FROM orders"),
]
