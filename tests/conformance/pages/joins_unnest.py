"""Flink SQL reference, Queries > Joins > Array Expansion: CROSS JOIN UNNEST of arrays, maps and arrays of ROWs,
WITH ORDINALITY and LEFT JOIN ... ON TRUE, over the orders' non-ASCII and NULL names, negative quantities and
out-of-order times (windows over the expanded rows)."""
from tests.conformance.pages import Case

PAGE = "Joins: Array Expansion (UNNEST)"
VIEWS = [
    "CREATE VIEW order_words AS SELECT order_id, customer_id, ts, ARRAY[product, UPPER(product), "
    "CAST(quantity AS STRING)] AS words, MAP[COALESCE(product, '?'), quantity, 'n', order_id] AS counts FROM orders",
    "CREATE VIEW word_rows AS SELECT ts, w FROM order_words CROSS JOIN UNNEST(words) AS t (w)",
]
SIGNED = "(SELECT order_id, CASE WHEN quantity > 0 THEN ARRAY[quantity, quantity * -2] END AS qs FROM orders)"
CASES = [
    Case("unnest array", "SELECT order_id, w FROM order_words CROSS JOIN UNNEST(words) AS t (w)"),
    Case("unnest comma form", "SELECT order_id, w FROM order_words, UNNEST(words) AS t (w) WHERE w IS NOT NULL "
                              "AND order_id < 20"),
    Case("unnest join on true", "SELECT o.order_id, t.w FROM order_words AS o JOIN UNNEST(o.words) AS t (w) ON TRUE"),
    Case("unnest with ordinality", "SELECT order_id, w, pos FROM order_words CROSS JOIN UNNEST(words) WITH ORDINALITY "
                                   "AS t (w, pos) WHERE pos <> 2"),
    Case("unnest map", "SELECT order_id, k, v FROM order_words CROSS JOIN UNNEST(counts) AS t (k, v)"),
    Case("unnest map default names", "SELECT order_id, `KEY`, `VALUE` FROM order_words CROSS JOIN UNNEST(counts)"),
    Case("unnest array default name", "SELECT order_id, `EXPR$0` AS w FROM order_words CROSS JOIN UNNEST(words)"),
    Case("unnest rows", "SELECT order_id, a, b FROM orders CROSS JOIN UNNEST(ARRAY[ROW(quantity, product), "
                        "ROW(customer_id, 'ß')]) AS t (a, b)"),
    Case("unnest literal array", "SELECT order_id, x FROM orders CROSS JOIN UNNEST(ARRAY[order_id, -order_id, 7]) "
                                 "AS t (x) WHERE order_id <= 5"),
    Case("unnest left join null array", f"SELECT order_id, x FROM {SIGNED} LEFT JOIN UNNEST(qs) AS t (x) ON TRUE"),
    Case("unnest inner drops null array", f"SELECT order_id, x FROM {SIGNED} CROSS JOIN UNNEST(qs) AS t (x)"),
    Case("unnest grouped", "SELECT w, COUNT(*) AS n FROM order_words CROSS JOIN UNNEST(words) AS t (w) GROUP BY w"),
    Case("unnest expression", "SELECT order_id, CHAR_LENGTH(w) AS len, w || '!' AS loud FROM order_words "
                              "CROSS JOIN UNNEST(words) AS t (w) WHERE w LIKE '%É%' OR w LIKE '%ö%'"),
    Case("unnest then window", "SELECT window_start, window_end, COUNT(*) AS n, COUNT(DISTINCT w) AS kinds FROM "
                               "TABLE(TUMBLE(TABLE word_rows, DESCRIPTOR(ts), INTERVAL '5' SECOND)) "
                               "GROUP BY window_start, window_end"),
    Case("unnest joined", "SELECT c.name, t.w FROM order_words AS o CROSS JOIN UNNEST(o.words) AS t (w) "
                          "JOIN customers AS c ON o.customer_id = c.customer_id WHERE t.w IS NOT NULL"),
]
