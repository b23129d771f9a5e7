"""Flink SQL reference, Queries > ORDER BY and LIMIT (streaming: ordered by a time attribute first, or a Top-N
with LIMIT), OFFSET and FETCH."""
from tests.conformance.pages import Case

PAGE = "ORDER BY & LIMIT"
CASES = [
    Case("order by time", "SELECT order_id, ts FROM orders ORDER BY ts"),
    Case("order by time then key", "SELECT order_id, quantity, ts FROM orders ORDER BY ts, quantity DESC"),
    Case("order by limit", "SELECT order_id, quantity FROM orders ORDER BY quantity DESC, order_id LIMIT 5"),
    Case("order by nulls last", "SELECT order_id, quantity FROM orders ORDER BY quantity NULLS LAST, order_id LIMIT 4"),
    Case("order by default nulls", "SELECT order_id, discount FROM orders ORDER BY discount, order_id LIMIT 6"),
    Case("limit with offset", "SELECT order_id, quantity FROM orders ORDER BY quantity DESC, order_id LIMIT 3 OFFSET 2"),
    Case("fetch first", "SELECT order_id FROM orders ORDER BY order_id FETCH FIRST 3 ROWS ONLY"),
    Case("offset fetch", "SELECT order_id FROM orders ORDER BY order_id OFFSET 5 ROWS FETCH NEXT 2 ROWS ONLY"),
    Case("order by aggregate limit", "SELECT customer_id, COUNT(*) AS n FROM orders GROUP BY customer_id "
                                     "ORDER BY n DESC, customer_id LIMIT 3"),
    Case("order by string limit", "SELECT name FROM customers ORDER BY name LIMIT 4"),
    Case("order by decimal limit", "SELECT order_id, price FROM orders ORDER BY price DESC LIMIT 3"),
]
