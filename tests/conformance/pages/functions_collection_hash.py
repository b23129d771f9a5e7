"""Flink SQL reference, System (Built-in) Functions > Collection, Value Construction, Value Access, Hash and
Catalog Functions."""
from tests.conformance.pages import Case

PAGE = "Functions: collection, value construction, hash"
CASES = [
    Case("fn array construct and access", "SELECT order_id, ARRAY[order_id, 7][1] AS first, CARDINALITY(ARRAY[1, 2, "
                                          "order_id]) AS n, ARRAY[order_id, 2][5] AS missing FROM orders"),
    Case("fn array functions", "SELECT order_id, ARRAY_CONTAINS(ARRAY[1, 2, 3], MOD(order_id, 5)) AS has, "
                               "ARRAY_POSITION(ARRAY[2, 4, 6], MOD(order_id, 7)) AS pos, ARRAY_MAX(ARRAY[order_id, 10]) "
                               "AS mx FROM orders"),
    Case("fn array join", "SELECT order_id, ARRAY_JOIN(ARRAY['a', CAST(order_id AS STRING)], '+') AS j FROM orders "
                          "WHERE order_id < 10"),
    Case("fn map construct and access", "SELECT order_id, MAP['k', order_id, 'l', 2]['k'] AS k, CARDINALITY(MAP['a', "
                                        "1]) AS n FROM orders WHERE order_id < 10"),
    Case("fn split into array", "SELECT name, CARDINALITY(SPLIT(name, 'a')) AS parts FROM customers"),
    Case("fn hashes", "SELECT name, MD5(name) AS m, SHA1(name) AS s1, SHA256(name) AS s256 FROM customers"),
    Case("fn sha2 lengths", "SELECT name, SHA2(name, 224) AS s224, SHA512(name) AS s512 FROM customers WHERE "
                            "customer_id < 4"),
    Case("fn current database", "SELECT CURRENT_DATABASE() AS db, COUNT(*) AS n FROM customers"),
]
