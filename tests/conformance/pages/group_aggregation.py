"""Flink SQL reference, Queries > Group Aggregation: GROUP BY, HAVING, DISTINCT and FILTER aggregates,
GROUPING SETS, ROLLUP and CUBE (an updating result: its changelog applied)."""
from tests.conformance.pages import Case

PAGE = "Group Aggregation"
CASES = [
    Case("count by key", "SELECT customer_id, COUNT(*) AS n FROM orders GROUP BY customer_id"),
    Case("aggregates by key", "SELECT customer_id, SUM(quantity) AS s, MIN(quantity) AS lo, MAX(quantity) AS hi, "
                              "AVG(quantity) AS a FROM orders GROUP BY customer_id"),
    Case("group by non-ascii", "SELECT product, COUNT(*) AS n, SUM(price) AS revenue FROM orders GROUP BY product"),
    Case("global aggregate", "SELECT COUNT(*) AS n, SUM(quantity) AS q, MAX(ts) AS last_ts FROM orders"),
    Case("average types", "SELECT AVG(quantity) AS q, AVG(discount) AS d, AVG(price) AS p FROM orders"),
    Case("decimal sum and max", "SELECT customer_id, SUM(price) AS s, MAX(price) AS m FROM orders GROUP BY customer_id"),
    Case("having", "SELECT customer_id, COUNT(*) AS n FROM orders GROUP BY customer_id HAVING COUNT(*) > 6"),
    Case("having on other aggregate", "SELECT product, MAX(quantity) AS m FROM orders GROUP BY product "
                                      "HAVING SUM(quantity) > 10"),
    Case("count filter", "SELECT customer_id, COUNT(*) FILTER (WHERE quantity > 0) AS sales, "
                         "COUNT(*) FILTER (WHERE quantity < 0) AS refunds FROM orders GROUP BY customer_id"),
    Case("sum filter", "SELECT product, SUM(quantity) FILTER (WHERE discount > 0) AS discounted FROM orders "
                       "GROUP BY product"),
    Case("global count filter", "SELECT COUNT(*) FILTER (WHERE product = 'café') AS cafe, COUNT(*) AS n FROM orders"),
    Case("distinct with filter", "SELECT customer_id, COUNT(DISTINCT product) FILTER (WHERE quantity > 0) AS p "
                                 "FROM orders GROUP BY customer_id"),
    Case("count distinct by key", "SELECT customer_id, COUNT(DISTINCT product) AS p FROM orders GROUP BY customer_id"),
    Case("sum distinct", "SELECT customer_id, SUM(DISTINCT quantity) AS s FROM orders GROUP BY customer_id"),
    Case("group by expression", "SELECT quantity > 0 AS sale, COUNT(*) AS n FROM orders GROUP BY quantity > 0"),
    Case("group by two keys", "SELECT customer_id, product, COUNT(*) AS n FROM orders GROUP BY customer_id, product"),
    Case("grouping sets", "SELECT customer_id, product, COUNT(*) AS n FROM orders "
                          "GROUP BY GROUPING SETS ((customer_id, product), (customer_id), ())"),
    Case("rollup", "SELECT customer_id, product, SUM(quantity) AS q FROM orders GROUP BY ROLLUP (customer_id, product)"),
    Case("cube", "SELECT country, tier, COUNT(*) AS n FROM customers GROUP BY CUBE (country, tier)"),
    Case("grouping function", "SELECT country, tier, GROUPING(country) AS gc, GROUPING(tier) AS gt, COUNT(*) AS n "
                              "FROM customers GROUP BY ROLLUP (country, tier)"),
    Case("grouping id", "SELECT country, GROUPING_ID(country, tier) AS g, COUNT(*) AS n FROM customers "
                        "GROUP BY CUBE (country, tier)"),
    Case("aggregate of aggregate", "SELECT n, COUNT(*) AS customers FROM (SELECT customer_id, COUNT(*) AS n "
                                   "FROM orders GROUP BY customer_id) GROUP BY n"),
    Case("aggregate over join", "SELECT c.tier, SUM(o.quantity) AS q FROM orders AS o JOIN customers AS c "
                                "ON o.customer_id = c.customer_id GROUP BY c.tier"),
    Case("min and max of strings", "SELECT customer_id, MIN(product) AS first_p, MAX(product) AS last_p FROM orders "
                                   "GROUP BY customer_id"),
    Case("aggregate with where", "SELECT product, SUM(quantity) AS q FROM orders WHERE quantity > 0 GROUP BY product"),
    Case("empty aggregate input", "SELECT customer_id, COUNT(*) AS n FROM orders WHERE quantity > 100 "
                                  "GROUP BY customer_id"),
    Case("distinct over group by", "SELECT DISTINCT n FROM (SELECT customer_id, COUNT(*) AS n FROM orders "
                                   "GROUP BY customer_id)"),
]
