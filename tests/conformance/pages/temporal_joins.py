"""Flink SQL reference, Queries > Joins > Event Time Temporal Join: orders joined with the version of their
product's price valid at the order's time, from a table with a primary key and a watermark and from a view
that keeps the last row per product. One price arrives a second out of order: a version of its own in the
table, ignored by the view's deduplication (a newer row of its product came first)."""
import datetime

from tests.conformance.pages import Case
from tests.conformance.tables import BASE, Table

PAGE = "Joins: Event Time Temporal Join"
VERSIONS = [("Äpfel", 1.10, 0), ("café", 2.5, 0), ("Ñoquis", 4.0, 0), ("東京ラーメン", 9.0, 3), ("pear", 0.5, 8),
            ("Äpfel", 1.20, 10), ("Äpfel", 9.99, 9), ("café", 2.7, 12), ("Äpfel", 1.15, 18), ("東京ラーメン", 8.5, 20),
            ("pear", 0.6, 22), ("Ñoquis", -1.0, 25), ("café", 2.9, 30)]  # "Zoë tea" never has a price


def _prices() -> list[tuple]:
    return [(product, price, BASE + datetime.timedelta(seconds=s)) for product, price, s in VERSIONS]


TABLES = [
    Table("product_prices", "product STRING, unit_price DOUBLE, valid_from TIMESTAMP(3), "
                            "PRIMARY KEY (product) NOT ENFORCED", _prices(),
          "valid_from AS valid_from - INTERVAL '2' SECOND"),
    Table("price_log", "product STRING, unit_price DOUBLE, valid_from TIMESTAMP(3)", _prices(),
          "valid_from AS valid_from - INTERVAL '2' SECOND"),
]
VIEWS = [
    "CREATE VIEW latest_prices AS SELECT product, unit_price, valid_from FROM (SELECT *, ROW_NUMBER() OVER "
    "(PARTITION BY product ORDER BY valid_from DESC) AS rn FROM price_log) WHERE rn = 1",
    "CREATE VIEW priced_orders AS SELECT o.order_id, o.ts, o.quantity, p.unit_price FROM orders AS o "
    "JOIN product_prices FOR SYSTEM_TIME AS OF o.ts AS p ON o.product = p.product",
]
AS_OF = "FOR SYSTEM_TIME AS OF o.ts AS p ON o.product = p.product"
CASES = [
    Case("temporal join", f"SELECT o.order_id, o.product, p.unit_price, p.valid_from FROM orders AS o "
                          f"JOIN product_prices {AS_OF}"),
    Case("left temporal join", f"SELECT o.order_id, o.product, p.unit_price FROM orders AS o "
                               f"LEFT JOIN product_prices {AS_OF}"),
    Case("temporal join star", f"SELECT * FROM orders AS o JOIN product_prices {AS_OF}"),
    Case("temporal join computed", f"SELECT o.order_id, o.quantity * p.unit_price AS amount FROM orders AS o "
                                   f"JOIN product_prices {AS_OF} WHERE o.quantity > 0"),
    Case("temporal join versioned view", f"SELECT o.order_id, p.unit_price FROM orders AS o JOIN latest_prices {AS_OF}"),
    Case("left temporal join versioned view", f"SELECT o.order_id, o.product, p.unit_price FROM orders AS o "
                                              f"LEFT JOIN latest_prices {AS_OF}"),
    Case("temporal join condition", f"SELECT o.order_id, p.unit_price FROM orders AS o JOIN product_prices "
                                    f"{AS_OF} AND p.unit_price > 1"),
    Case("left temporal join condition", f"SELECT o.order_id, p.unit_price FROM orders AS o LEFT JOIN product_prices "
                                         f"{AS_OF} AND p.unit_price > 1"),
    Case("temporal join windowed", "SELECT window_start, COUNT(*) AS n, SUM(unit_price) AS s FROM TABLE(TUMBLE("
                                   "TABLE priced_orders, DESCRIPTOR(ts), INTERVAL '10' SECOND)) "
                                   "GROUP BY window_start, window_end"),
    Case("temporal join aggregated", "SELECT unit_price, COUNT(*) AS n, SUM(quantity) AS q FROM priced_orders "
                                     "GROUP BY unit_price"),
]
