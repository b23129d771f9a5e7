"""Flink SQL reference, System (Built-in) Functions > Aggregate Functions: the statistical aggregates (STDDEV_POP,
STDDEV_SAMP, VAR_POP, VAR_SAMP and their aliases) over DOUBLE, INT and DECIMAL values with NULLs and negative
numbers, grouped, windowed over out-of-order events and with FILTER."""
from tests.conformance.pages import Case

PAGE = "Functions: aggregate"
CASES = [
    Case("agg stddev double", "SELECT customer_id, STDDEV_POP(discount) AS sp, STDDEV_SAMP(discount) AS ss FROM orders "
                              "GROUP BY customer_id"),
    Case("agg variance double", "SELECT customer_id, VAR_POP(discount) AS vp, VAR_SAMP(discount) AS vs, "
                                "VARIANCE(discount) AS v FROM orders GROUP BY customer_id"),
    Case("agg stddev int", "SELECT customer_id, STDDEV_POP(quantity) AS sp, VAR_SAMP(quantity) AS vs, "
                           "STDDEV(quantity) AS s FROM orders GROUP BY customer_id"),
    Case("agg stddev decimal", "SELECT customer_id, STDDEV_POP(price) AS sp, VAR_POP(price) AS vp FROM orders "
                               "GROUP BY customer_id"),
    Case("agg stddev global", "SELECT STDDEV_SAMP(d) AS s, VAR_POP(a) AS v, COUNT(*) AS n FROM numbers WHERE id < 5"),
    Case("agg stddev filtered", "SELECT customer_id, STDDEV_POP(discount) FILTER (WHERE quantity > 0) AS sp, "
                                "AVG(discount) AS a FROM orders GROUP BY customer_id"),
    Case("agg stddev window", "SELECT window_start, window_end, STDDEV_POP(discount) AS sp, VAR_SAMP(quantity) AS vs "
                              "FROM TABLE(TUMBLE(TABLE orders, DESCRIPTOR(ts), INTERVAL '5' SECOND)) "
                              "GROUP BY window_start, window_end"),
    Case("agg stddev having", "SELECT customer_id, VAR_POP(discount) AS v FROM orders GROUP BY customer_id "
                              "HAVING VAR_POP(discount) > 0.01"),
    Case("agg stddev expression", "SELECT customer_id, ROUND(STDDEV_POP(discount * 10), 3) AS r FROM orders "
                                  "GROUP BY customer_id"),
]
