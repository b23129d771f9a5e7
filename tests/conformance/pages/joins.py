"""Flink SQL reference, Queries > Joins: regular joins of every kind (updating where outer), interval joins."""
from tests.conformance.pages import Case

PAGE = "Joins"
INTERVAL = "s.sts BETWEEN o.ts AND o.ts + INTERVAL '3' SECOND"
CASES = [
    Case("inner join", "SELECT o.order_id, c.name FROM orders AS o JOIN customers AS c ON o.customer_id = c.customer_id"),
    Case("left join", "SELECT o.order_id, c.name FROM orders AS o LEFT JOIN customers AS c "
                      "ON o.customer_id = c.customer_id"),
    Case("right join", "SELECT o.order_id, c.name FROM orders AS o RIGHT JOIN customers AS c "
                       "ON o.customer_id = c.customer_id"),
    Case("full join", "SELECT o.order_id, c.customer_id, c.name FROM orders AS o FULL JOIN customers AS c "
                      "ON o.customer_id = c.customer_id"),
    Case("join with residual", "SELECT o.order_id, c.name FROM orders AS o JOIN customers AS c "
                               "ON o.customer_id = c.customer_id AND o.quantity > 2"),
    Case("join where on right", "SELECT o.order_id, c.country FROM orders AS o JOIN customers AS c "
                                "ON o.customer_id = c.customer_id WHERE c.country = 'SE'"),
    Case("join using", "SELECT order_id, name FROM orders JOIN customers USING (customer_id)"),
    Case("join on two keys", "SELECT o.order_id, s.ship_id FROM orders AS o JOIN shipments AS s "
                             "ON o.order_id = s.order_id AND o.customer_id = s.ship_id % 7"),
    Case("three way join", "SELECT o.order_id, c.name, s.carrier FROM orders AS o JOIN customers AS c "
                           "ON o.customer_id = c.customer_id JOIN shipments AS s ON s.order_id = o.order_id"),
    Case("join of aggregates", "SELECT c.name, t.n FROM customers AS c JOIN (SELECT customer_id, COUNT(*) AS n "
                               "FROM orders GROUP BY customer_id) AS t ON c.customer_id = t.customer_id"),
    Case("left join of aggregate", "SELECT c.name, t.q FROM customers AS c LEFT JOIN (SELECT customer_id, "
                                   "SUM(quantity) AS q FROM orders GROUP BY customer_id) AS t "
                                   "ON c.customer_id = t.customer_id"),
    Case("self join", "SELECT a.order_id, b.order_id AS other FROM orders AS a JOIN orders AS b "
                      "ON a.customer_id = b.customer_id AND a.order_id + 7 = b.order_id"),
    Case("join non-ascii names", "SELECT c.name, o.product FROM customers AS c JOIN orders AS o "
                                 "ON c.customer_id = o.customer_id WHERE o.product = '東京ラーメン'"),
    Case("interval join", f"SELECT o.order_id, s.ship_id FROM orders AS o JOIN shipments AS s "
                          f"ON o.order_id = s.order_id AND {INTERVAL}"),
    Case("interval join comparisons", "SELECT o.order_id, s.ship_id FROM orders AS o JOIN shipments AS s ON "
                                      "o.order_id = s.order_id AND s.sts > o.ts AND s.sts < o.ts + INTERVAL '2' SECOND"),
    Case("left interval join", f"SELECT o.order_id, s.ship_id FROM orders AS o LEFT JOIN shipments AS s "
                               f"ON o.order_id = s.order_id AND {INTERVAL}"),
    Case("right interval join", f"SELECT o.order_id, s.ship_id FROM orders AS o RIGHT JOIN shipments AS s "
                                f"ON o.order_id = s.order_id AND {INTERVAL}"),
    Case("full interval join", f"SELECT o.order_id, s.ship_id FROM orders AS o FULL JOIN shipments AS s "
                               f"ON o.order_id = s.order_id AND {INTERVAL}"),
    Case("interval join then window", "SELECT window_start, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE shipped, "
                                      "DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY window_start, window_end"),
]
VIEWS = [f"CREATE VIEW shipped AS SELECT o.order_id, o.ts, s.carrier FROM orders AS o JOIN shipments AS s "
         f"ON o.order_id = s.order_id AND {INTERVAL}"]
