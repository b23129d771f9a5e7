"""Scalar and correlated subqueries, planned into joins as Flink plans them (Queries overview, Joins)."""
from tests.conformance.pages import Case

PAGE = "Subqueries"
CASES = [
    Case("scalar subquery in select", "SELECT order_id, quantity, (SELECT MAX(quantity) FROM orders) AS top "
                                      "FROM orders WHERE order_id < 6"),
    Case("scalar subquery in where", "SELECT order_id, quantity FROM orders WHERE quantity > "
                                     "(SELECT AVG(quantity) FROM orders)"),
    Case("correlated scalar subquery", "SELECT o.order_id, o.quantity FROM orders AS o WHERE o.quantity > (SELECT "
                                       "AVG(i.quantity) FROM orders AS i WHERE i.customer_id = o.customer_id)"),
    Case("correlated count", "SELECT c.name, (SELECT COUNT(*) FROM orders AS o WHERE o.customer_id = c.customer_id) "
                             "AS n FROM customers AS c"),
    Case("subquery in from", "SELECT t.customer_id, t.q FROM (SELECT customer_id, SUM(quantity) AS q FROM orders "
                             "GROUP BY customer_id) AS t WHERE t.q > 5"),
    Case("in with aggregate subquery", "SELECT name FROM customers WHERE customer_id IN (SELECT customer_id FROM orders "
                                       "GROUP BY customer_id HAVING COUNT(*) > 6)"),
    Case("exists uncorrelated", "SELECT name FROM customers WHERE EXISTS (SELECT * FROM orders WHERE quantity > 8)"),
    Case("nested subqueries", "SELECT order_id FROM orders WHERE customer_id IN (SELECT customer_id FROM customers "
                              "WHERE country IN (SELECT country FROM customers WHERE tier = 'silver'))"),
]
