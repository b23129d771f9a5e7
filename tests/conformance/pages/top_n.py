"""Flink SQL reference, Queries > Top-N and Deduplication: ROW_NUMBER, RANK and DENSE_RANK over a partition,
filtered by the rank; keeping the first or last row of each key."""
from tests.conformance.pages import Case

PAGE = "Top-N & Deduplication"


def ranked(fn: str, condition: str, select: str = "*", partition: str = "customer_id",
           order: str = "quantity DESC, order_id") -> str:
    return (f"SELECT {select} FROM (SELECT order_id, customer_id, product, quantity, ts, {fn}() OVER (PARTITION BY "
            f"{partition} ORDER BY {order}) AS rk FROM orders) WHERE {condition}")


CASES = [
    Case("row number top 2", ranked("ROW_NUMBER", "rk <= 2")),
    Case("row number without number", ranked("ROW_NUMBER", "rk <= 3", "order_id, customer_id, quantity")),
    Case("row number less than", ranked("ROW_NUMBER", "rk < 3", "order_id, rk")),
    Case("row number range", ranked("ROW_NUMBER", "rk BETWEEN 2 AND 3", "order_id, customer_id, rk")),
    Case("rank top 2", ranked("RANK", "rk <= 2", "order_id, customer_id, quantity, rk", order="quantity DESC")),
    Case("dense rank top 2", ranked("DENSE_RANK", "rk <= 2", "order_id, customer_id, quantity, rk",
                                    order="quantity DESC")),
    Case("rank by product", ranked("RANK", "rk = 1", "order_id, product, quantity", partition="product",
                                   order="quantity")),
    Case("top n global", "SELECT order_id, quantity FROM (SELECT order_id, quantity, ROW_NUMBER() OVER (ORDER BY "
                         "quantity DESC, order_id) AS rk FROM orders) WHERE rk <= 4"),
    Case("top n of aggregate", "SELECT product, q FROM (SELECT product, q, ROW_NUMBER() OVER (ORDER BY q DESC) AS rk "
                               "FROM (SELECT product, SUM(quantity) AS q FROM orders GROUP BY product)) WHERE rk <= 2"),
    Case("top n nulls last", ranked("ROW_NUMBER", "rk <= 2", "order_id, customer_id, quantity",
                                    order="quantity DESC NULLS LAST, order_id")),
    Case("deduplicate first", "SELECT order_id, customer_id, ts FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY "
                              "customer_id ORDER BY ts ASC) AS rn FROM orders) WHERE rn = 1"),
    Case("deduplicate last", "SELECT order_id, customer_id, ts FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY "
                             "customer_id ORDER BY ts DESC) AS rn FROM orders) WHERE rn = 1"),
    Case("deduplicate by product", "SELECT order_id, product FROM (SELECT order_id, product, ROW_NUMBER() OVER "
                                   "(PARTITION BY product ORDER BY ts) AS rn FROM orders) WHERE rn = 1"),
    Case("deduplicate shipments", "SELECT ship_id, order_id FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY order_id "
                                  "ORDER BY sts DESC) AS rn FROM shipments) WHERE rn = 1"),
]
