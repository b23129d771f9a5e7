"""Flink SQL reference, Queries > Window Top-N and Window Deduplication."""
from tests.conformance.pages import Case

PAGE = "Window Top-N & Window Deduplication"
TUMBLE = "TABLE(TUMBLE(TABLE orders, DESCRIPTOR(ts), INTERVAL '10' SECOND))"
AGG = (f"SELECT window_start, window_end, customer_id, SUM(quantity) AS q FROM {TUMBLE} "
       "GROUP BY window_start, window_end, customer_id")
CASES = [
    Case("window top n after aggregation", f"SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, "
                                           f"window_end ORDER BY q DESC, customer_id) AS rn FROM ({AGG})) WHERE rn <= 2"),
    Case("window top n without number", "SELECT window_start, customer_id, q FROM (SELECT *, ROW_NUMBER() OVER "
                                        "(PARTITION BY window_start, window_end ORDER BY q DESC, customer_id) AS rn "
                                        f"FROM ({AGG})) WHERE rn <= 1"),
    Case("window top n on tvf", "SELECT window_start, order_id, quantity FROM (SELECT *, ROW_NUMBER() OVER (PARTITION "
                                "BY window_start, window_end ORDER BY quantity DESC, order_id) AS rn FROM "
                                f"{TUMBLE}) WHERE rn <= 3"),
    Case("window rank", "SELECT window_start, order_id, rk FROM (SELECT *, RANK() OVER (PARTITION BY window_start, "
                        f"window_end ORDER BY quantity DESC) AS rk FROM {TUMBLE}) WHERE rk <= 2"),
    Case("window deduplication first", "SELECT window_start, order_id, customer_id FROM (SELECT *, ROW_NUMBER() OVER "
                                       "(PARTITION BY window_start, window_end, customer_id ORDER BY ts) AS rn FROM "
                                       f"{TUMBLE}) WHERE rn = 1"),
    Case("window deduplication last", "SELECT window_start, order_id, customer_id FROM (SELECT *, ROW_NUMBER() OVER "
                                      "(PARTITION BY window_start, window_end, customer_id ORDER BY ts DESC) AS rn FROM "
                                      f"{TUMBLE}) WHERE rn = 1"),
    Case("window top n per key", "SELECT window_start, customer_id, order_id FROM (SELECT *, ROW_NUMBER() OVER "
                                 "(PARTITION BY window_start, window_end, customer_id ORDER BY quantity DESC, order_id) "
                                 f"AS rn FROM {TUMBLE}) WHERE rn <= 2"),
]
