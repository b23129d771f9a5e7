"""Flink SQL reference, Queries > Windowing TVF and Window Aggregation: TUMBLE, HOP, CUMULATE and SESSION, read
row by row and aggregated, with GROUPING SETS, ROLLUP, CUBE, FILTER and HAVING."""
from tests.conformance.pages import Case

PAGE = "Windowing TVF & Window Aggregation"
TUMBLE = "TABLE(TUMBLE(TABLE orders, DESCRIPTOR(ts), INTERVAL '10' SECOND))"
HOP = "TABLE(HOP(TABLE orders, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND))"
CUMULATE = "TABLE(CUMULATE(TABLE orders, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '15' SECOND))"
CASES = [
    Case("tumble rows", f"SELECT order_id, window_start, window_end, window_time FROM {TUMBLE}"),
    Case("hop rows", f"SELECT order_id, window_start, window_end FROM {HOP} WHERE order_id < 10"),
    Case("cumulate rows", f"SELECT order_id, window_start, window_end FROM {CUMULATE} WHERE order_id < 12"),
    Case("tumble count", f"SELECT window_start, window_end, COUNT(*) AS n FROM {TUMBLE} GROUP BY window_start, window_end"),
    Case("tumble by key", f"SELECT window_start, customer_id, SUM(quantity) AS q, AVG(quantity) AS a FROM {TUMBLE} "
                          "GROUP BY window_start, window_end, customer_id"),
    Case("tumble window time", f"SELECT window_start, window_end, window_time, MAX(price) AS m FROM {TUMBLE} "
                               "GROUP BY window_start, window_end, window_time"),
    Case("tumble decimal sum", f"SELECT window_start, SUM(price) AS revenue FROM {TUMBLE} GROUP BY window_start, window_end"),
    Case("hop by product", f"SELECT window_start, window_end, product, COUNT(*) AS n FROM {HOP} "
                           "GROUP BY window_start, window_end, product"),
    Case("cumulate sum", f"SELECT window_start, window_end, SUM(quantity) AS q FROM {CUMULATE} "
                         "GROUP BY window_start, window_end"),
    Case("session", "SELECT window_start, window_end, customer_id, COUNT(*) AS n FROM TABLE(SESSION(TABLE orders "
                    "PARTITION BY customer_id, DESCRIPTOR(ts), INTERVAL '3' SECOND)) "
                    "GROUP BY window_start, window_end, customer_id"),
    Case("session global", "SELECT window_start, window_end, COUNT(*) AS n FROM TABLE(SESSION(TABLE shipments, "
                           "DESCRIPTOR(sts), INTERVAL '2' SECOND)) GROUP BY window_start, window_end"),
    Case("tumble count filter", f"SELECT window_start, COUNT(*) FILTER (WHERE quantity > 0) AS sales, COUNT(*) AS n "
                                f"FROM {TUMBLE} GROUP BY window_start, window_end"),
    Case("tumble having", f"SELECT window_start, customer_id, COUNT(*) AS n FROM {TUMBLE} "
                          "GROUP BY window_start, window_end, customer_id HAVING COUNT(*) > 1"),
    Case("tumble grouping sets", f"SELECT window_start, window_end, customer_id, product, COUNT(*) AS n FROM {TUMBLE} "
                                 "GROUP BY window_start, window_end, GROUPING SETS ((customer_id), (product), ())"),
    Case("tumble rollup", f"SELECT window_start, window_end, customer_id, product, SUM(quantity) AS q FROM {TUMBLE} "
                          "GROUP BY window_start, window_end, ROLLUP (customer_id, product)"),
    Case("tumble cube", f"SELECT window_start, window_end, customer_id, product, COUNT(*) AS n FROM {TUMBLE} "
                        "GROUP BY window_start, window_end, CUBE (customer_id, product)"),
    Case("tumble count distinct", f"SELECT window_start, COUNT(DISTINCT customer_id) AS c FROM {TUMBLE} "
                                  "GROUP BY window_start, window_end"),
    Case("tumble with where", f"SELECT window_start, COUNT(*) AS n FROM {TUMBLE} WHERE quantity > 0 "
                              "GROUP BY window_start, window_end"),
    Case("tumble min max", f"SELECT window_start, MIN(discount) AS lo, MAX(discount) AS hi, MIN(product) AS p "
                           f"FROM {TUMBLE} GROUP BY window_start, window_end"),
    Case("window over window", "SELECT window_start, window_end, SUM(n) AS n FROM TABLE(TUMBLE(TABLE hop_counts, "
                               "DESCRIPTOR(wt), INTERVAL '20' SECOND)) GROUP BY window_start, window_end"),
    Case("hop shipments", "SELECT window_start, carrier, COUNT(*) AS n FROM TABLE(HOP(TABLE shipments, DESCRIPTOR(sts), "
                          "INTERVAL '4' SECOND, INTERVAL '8' SECOND)) GROUP BY window_start, window_end, carrier"),
]
VIEWS = [f"CREATE VIEW hop_counts AS SELECT window_start AS ws, window_end AS we, window_time AS wt, COUNT(*) AS n "
         f"FROM {HOP} GROUP BY window_start, window_end, window_time"]
