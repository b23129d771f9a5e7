"""Flink SQL reference, System (Built-in) Functions > String Functions, over the orders' and customers' names
(non-ASCII, NULL, empty)."""
from tests.conformance.pages import Case

PAGE = "Functions: string"
CASES = [
    Case("fn upper lower length", "SELECT order_id, UPPER(product) AS u, LOWER(product) AS l, CHAR_LENGTH(product) AS n "
                                  "FROM orders"),
    Case("fn concat", "SELECT order_id, product || '#' || CAST(order_id AS STRING) AS tag, CONCAT(product, '-', "
                      "CAST(quantity AS STRING)) AS c, CONCAT_WS('/', product, CAST(quantity AS STRING)) AS ws FROM orders"),
    Case("fn substring and position", "SELECT name, SUBSTRING(name FROM 2 FOR 2) AS mid, SUBSTR(name, 2) AS tail, "
                                      "POSITION('a' IN name) AS pos, LOCATE('a', name, 2) AS loc FROM customers"),
    Case("fn trim and pad", "SELECT customer_id, LPAD(name, 6, '*') AS lp, RPAD(name, 3, '-') AS rp, "
                            "TRIM(BOTH 'Å' FROM name) AS t, LTRIM(CONCAT('  ', name)) AS lt FROM customers"),
    Case("fn replace and repeat", "SELECT order_id, REPLACE(product, 'a', 'A') AS r, REPEAT(product, 2) AS rr, "
                                  "REVERSE(product) AS rev FROM orders WHERE order_id < 20"),
    Case("fn regexp", "SELECT order_id, REGEXP_REPLACE(product, '[aeiou]', '_') AS masked, REGEXP_EXTRACT(product, "
                      "'([a-z]+)', 1) AS word, REGEXP(product, '^[A-Z]') AS capital FROM orders"),
    Case("fn left right instr", "SELECT name, LEFT(name, 2) AS l2, RIGHT(name, 2) AS r2, INSTR(name, 'ö') AS i "
                                "FROM customers"),
    Case("fn split index", "SELECT order_id, SPLIT_INDEX(product, 'e', 0) AS first, SPLIT_INDEX(product, 'e', 1) AS "
                           "later FROM orders"),
    Case("fn base64 and ascii", "SELECT name, TO_BASE64(name) AS b, FROM_BASE64(TO_BASE64(name)) AS back, ASCII(name) "
                                "AS a FROM customers"),
    Case("fn string in where", "SELECT order_id, product FROM orders WHERE UPPER(product) LIKE '%E%' AND "
                               "CHAR_LENGTH(product) > 4"),
    Case("fn string group by", "SELECT LOWER(product) AS p, COUNT(*) AS n FROM orders GROUP BY LOWER(product)"),
    Case("fn translate and starts", "SELECT name, TRANSLATE(name, 'aö', 'AO') AS t, STARTSWITH(name, 'J') AS j, "
                                    "ENDSWITH(name, 'n') AS n FROM customers"),
]
