"""Flink SQL reference, Queries > Over Aggregation: aggregates and LAG, LEAD, FIRST_VALUE, LAST_VALUE over a
partition ordered by its time attribute, ROWS and RANGE frames, named WINDOW clauses."""
from tests.conformance.pages import Case

PAGE = "Over Aggregation"
CASES = [
    Case("over rows sum", "SELECT order_id, customer_id, SUM(quantity) OVER (PARTITION BY customer_id ORDER BY ts "
                          "ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) AS s FROM orders"),
    Case("over range count", "SELECT order_id, COUNT(*) OVER (PARTITION BY product ORDER BY ts RANGE BETWEEN "
                             "INTERVAL '5' SECOND PRECEDING AND CURRENT ROW) AS n FROM orders"),
    Case("over unbounded", "SELECT order_id, customer_id, SUM(quantity) OVER (PARTITION BY customer_id ORDER BY ts "
                           "ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS so_far FROM orders"),
    Case("over without partition", "SELECT order_id, MAX(quantity) OVER (ORDER BY ts ROWS BETWEEN 3 PRECEDING AND "
                                   "CURRENT ROW) AS m FROM orders"),
    Case("over several aggregates", "SELECT order_id, COUNT(quantity) OVER w AS n, MIN(quantity) OVER w AS lo, "
                                    "MAX(quantity) OVER w AS hi, AVG(quantity) OVER w AS a FROM orders "
                                    "WINDOW w AS (PARTITION BY customer_id ORDER BY ts ROWS BETWEEN 4 PRECEDING AND "
                                    "CURRENT ROW)"),
    Case("named window", "SELECT order_id, SUM(price) OVER w AS revenue FROM orders WINDOW w AS (PARTITION BY "
                         "product ORDER BY ts RANGE BETWEEN INTERVAL '10' SECOND PRECEDING AND CURRENT ROW)"),
    Case("over decimal and double", "SELECT order_id, SUM(price) OVER w AS p, AVG(discount) OVER w AS d FROM orders "
                                    "WINDOW w AS (PARTITION BY customer_id ORDER BY ts ROWS BETWEEN 1 PRECEDING AND "
                                    "CURRENT ROW)"),
    # LAG over rows whose values are NULL: Flink 2.3 answers with a value of another partition (LagAggFunction),
    # so these read non-NULL values only
    Case("lag", "SELECT order_id, customer_id, LAG(quantity) OVER (PARTITION BY customer_id ORDER BY ts) AS before_q "
                "FROM orders WHERE quantity IS NOT NULL"),
    Case("lag with offset and default", "SELECT order_id, LAG(order_id, 2, -100) OVER (PARTITION BY customer_id "
                                        "ORDER BY ts) AS before2 FROM orders"),
    Case("lag of a string", "SELECT order_id, LAG(product, 1, 'none') OVER (PARTITION BY customer_id ORDER BY ts) "
                            "AS before_p FROM orders WHERE product IS NOT NULL"),
    Case("lead", "SELECT order_id, LEAD(quantity) OVER (PARTITION BY customer_id ORDER BY ts) AS nxt FROM orders"),
    Case("first value", "SELECT order_id, FIRST_VALUE(product) OVER (PARTITION BY customer_id ORDER BY ts ROWS "
                        "BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS first_p FROM orders"),
    Case("last value", "SELECT order_id, LAST_VALUE(quantity) OVER (PARTITION BY customer_id ORDER BY ts ROWS "
                       "BETWEEN 2 PRECEDING AND CURRENT ROW) AS last_q FROM orders"),
    Case("lag and sum together", "SELECT order_id, LAG(order_id) OVER w AS prev_id, SUM(quantity) OVER w AS s "
                                 "FROM orders WINDOW w AS (PARTITION BY product ORDER BY ts)"),
    Case("over with where", "SELECT order_id, COUNT(*) OVER (PARTITION BY customer_id ORDER BY ts RANGE BETWEEN "
                            "INTERVAL '20' SECOND PRECEDING AND CURRENT ROW) AS n FROM orders WHERE quantity > 0"),
    Case("over expression argument", "SELECT order_id, SUM(quantity * price) OVER (PARTITION BY customer_id ORDER BY "
                                     "ts ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS v FROM orders"),
    Case("over shipments", "SELECT ship_id, carrier, COUNT(*) OVER (PARTITION BY carrier ORDER BY sts RANGE BETWEEN "
                           "INTERVAL '3' SECOND PRECEDING AND CURRENT ROW) AS n FROM shipments"),
    Case("over then filter", "SELECT * FROM (SELECT order_id, SUM(quantity) OVER (PARTITION BY customer_id ORDER BY ts "
                             "ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS s FROM orders) WHERE s > 5"),
]
