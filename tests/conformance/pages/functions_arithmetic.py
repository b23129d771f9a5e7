"""Flink SQL reference, System (Built-in) Functions > Arithmetic Functions, over negative numbers, zeros, NULLs
and the extremes of INT and BIGINT."""
from tests.conformance.pages import Case

PAGE = "Functions: arithmetic"
CASES = [
    Case("fn abs mod power", "SELECT id, ABS(a) AS ab, MOD(a, 4) AS m, a % 3 AS r, POWER(b, 2) AS p FROM numbers "
                             "WHERE b <> 0"),
    Case("fn rounding", "SELECT id, ROUND(d, 1) AS r1, ROUND(d, 0) AS r0, CEIL(d) AS c, FLOOR(d) AS f, "
                        "SIGN(a) AS s FROM numbers"),
    Case("fn logarithms", "SELECT id, LN(d) AS ln_d, LOG10(d) AS l10, LOG2(d) AS l2, LOG(2, d) AS lb, EXP(b) AS e "
                          "FROM numbers"),
    Case("fn trigonometry", "SELECT id, SIN(d) AS s, COS(d) AS c, TAN(d) AS t, ATAN2(d, CAST(2 AS DOUBLE)) AS a2, "
                            "DEGREES(d) AS dg FROM numbers WHERE d BETWEEN -10 AND 10"),
    Case("fn sqrt and bin", "SELECT id, SQRT(ABS(d)) AS root, BIN(ABS(a)) AS bits, HEX(a) AS hx FROM numbers"),
    Case("fn arithmetic in aggregate", "SELECT customer_id, SUM(ABS(quantity)) AS q, MAX(ROUND(discount, 1)) AS d "
                                       "FROM orders GROUP BY customer_id"),
    Case("fn arithmetic filter", "SELECT order_id FROM orders WHERE MOD(order_id, 5) = 2 AND ABS(quantity) > 1"),
    Case("fn pi and e", "SELECT id, ROUND(PI() * b, 4) AS circle, ROUND(E(), 6) AS e FROM numbers WHERE id < 4"),
]
