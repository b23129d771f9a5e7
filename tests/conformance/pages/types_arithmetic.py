"""Flink's type semantics, part 1: integer and decimal arithmetic (division truncates, overflow wraps, MOD's sign,
DECIMAL precision and scale), as the reference's Data Types and arithmetic functions describe them."""
from tests.conformance.pages import Case

PAGE = "Types: arithmetic"
CASES = [
    Case("int division", "SELECT id, a / b AS q FROM numbers"),
    Case("int modulo", "SELECT id, a % b AS r, MOD(a, b) AS m FROM numbers"),
    Case("int literals division", "SELECT 7 / 2 AS a, -7 / 2 AS b, -39 / 4 AS c, 7 / -2 AS d"),
    Case("int overflow wraps", "SELECT id, a + 1 AS up, a - 1 AS down, a * 2 AS twice FROM numbers WHERE id IN (5, 6)"),
    Case("bigint overflow wraps", "SELECT id, big + 1 AS up, big * 2 AS twice FROM numbers WHERE id = 5"),
    Case("negation overflows", "SELECT id, -a AS neg, ABS(a) AS abs_a FROM numbers"),
    Case("bigint division", "SELECT id, big / b AS q, big % 7 AS r FROM numbers"),
    Case("int by decimal literal", "SELECT id, a / 2.0 AS q, a * 1.5 AS p FROM numbers"),
    Case("double arithmetic", "SELECT id, d / 2 AS half, d * d AS sq, d + a AS s FROM numbers"),
    Case("int with double", "SELECT id, a / d AS q FROM numbers WHERE d <> 0"),
    Case("widening", "SELECT id, CAST(a AS BIGINT) * 3 AS big3, CAST(a AS SMALLINT) + 1 AS small FROM numbers"),
    Case("decimal plus", "SELECT id, m + m AS twice, m + a AS with_int, m + 1.5 AS with_literal FROM numbers"),
    Case("decimal times", "SELECT id, m * m AS sq, m * a AS by_int, m * 0.1 AS tenth FROM numbers"),
    Case("decimal division", "SELECT id, m / 3 AS third, m / b AS by_b FROM numbers"),
    Case("decimal with double", "SELECT id, m * d AS product FROM numbers"),
    Case("price arithmetic", "SELECT order_id, price * 2.5 AS p, price - 1 AS less, price / 4 AS quarter FROM orders"),
    Case("division in group key", "SELECT EXTRACT(SECOND FROM ts) / 15 AS part, COUNT(*) AS n FROM orders "
                                  "GROUP BY EXTRACT(SECOND FROM ts) / 15"),
    Case("integer average", "SELECT AVG(a) AS avg_a, AVG(b) AS avg_b FROM numbers WHERE id < 5"),
    Case("sum of int is int", "SELECT customer_id, SUM(quantity) AS q FROM orders GROUP BY customer_id"),
    Case("sum overflows as int", "SELECT SUM(a) AS s FROM numbers WHERE id IN (1, 5)"),
    Case("power and sqrt", "SELECT id, POWER(a, 2) AS p, SQRT(ABS(d)) AS r FROM numbers WHERE id < 5"),
    Case("round", "SELECT id, ROUND(d, 1) AS rd, ROUND(m, 1) AS rm, ROUND(a / 3.0, 2) AS rq FROM numbers"),
    Case("floor and ceil", "SELECT id, FLOOR(d) AS fd, CEIL(m) AS cm, FLOOR(m) AS fm FROM numbers"),
    Case("tinyint arithmetic", "SELECT id, CAST(a AS TINYINT) + CAST(1 AS TINYINT) AS t FROM numbers WHERE id < 5"),
]
