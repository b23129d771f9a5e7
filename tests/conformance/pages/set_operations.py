"""Flink SQL reference, Queries > Set Operations: UNION, INTERSECT, EXCEPT (and ALL), IN and EXISTS."""
from tests.conformance.pages import Case

PAGE = "Set Operations"
CASES = [
    Case("union", "SELECT customer_id FROM orders UNION SELECT customer_id FROM customers"),
    Case("union all", "SELECT customer_id FROM orders WHERE order_id < 5 UNION ALL SELECT customer_id FROM customers"),
    Case("intersect", "SELECT customer_id FROM orders INTERSECT SELECT customer_id FROM customers"),
    Case("intersect all", "SELECT product FROM orders WHERE quantity > 0 INTERSECT ALL SELECT product FROM orders "
                          "WHERE discount > 0"),
    Case("except", "SELECT customer_id FROM customers EXCEPT SELECT customer_id FROM orders"),
    Case("except all", "SELECT product FROM orders EXCEPT ALL SELECT product FROM orders WHERE quantity > 3"),
    Case("in subquery", "SELECT order_id FROM orders WHERE customer_id IN (SELECT customer_id FROM customers "
                        "WHERE country = 'SE')"),
    Case("not in subquery", "SELECT order_id FROM orders WHERE customer_id NOT IN (SELECT customer_id FROM customers "
                            "WHERE tier = 'gold')"),
    Case("not in subquery with null", "SELECT name FROM customers WHERE customer_id NOT IN (SELECT customer_id "
                                      "FROM orders)"),
    Case("exists correlated", "SELECT c.name FROM customers AS c WHERE EXISTS (SELECT * FROM orders AS o "
                              "WHERE o.customer_id = c.customer_id AND o.quantity < 0)"),
    Case("not exists correlated", "SELECT c.name FROM customers AS c WHERE NOT EXISTS (SELECT * FROM orders AS o "
                                  "WHERE o.customer_id = c.customer_id)"),
    Case("in of two columns values", "SELECT order_id FROM orders WHERE product IN (SELECT product FROM orders "
                                     "WHERE quantity > 8)"),
    Case("union of different sources", "SELECT order_id AS id, ts FROM orders WHERE order_id < 4 UNION ALL "
                                       "SELECT ship_id, sts FROM shipments WHERE ship_id < 4"),
]
