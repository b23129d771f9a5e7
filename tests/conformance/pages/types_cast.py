"""Flink's type semantics, part 2: CAST and TRY_CAST (the reference's Type Conversion functions)."""
from tests.conformance.pages import Case

PAGE = "Types: CAST and TRY_CAST"
CASES = [
    Case("int to double", "SELECT id, CAST(a AS DOUBLE) AS x FROM numbers"),
    Case("double to int", "SELECT id, CAST(d AS INT) AS x, CAST(d AS BIGINT) AS y FROM numbers"),
    Case("decimal to int", "SELECT id, CAST(m AS INT) AS x FROM numbers"),
    Case("decimal rescale", "SELECT id, CAST(m AS DECIMAL(8, 1)) AS x FROM numbers"),
    Case("decimal overflow is null", "SELECT id, CAST(m AS DECIMAL(5, 1)) AS x FROM numbers"),
    Case("double to decimal", "SELECT id, CAST(d AS DECIMAL(12, 2)) AS x FROM numbers"),
    Case("bigint to int narrows", "SELECT id, CAST(big AS INT) AS x FROM numbers"),
    Case("int to tinyint narrows", "SELECT id, CAST(a AS TINYINT) AS x FROM numbers"),
    Case("numbers to string", "SELECT id, CAST(a AS STRING) AS sa, CAST(m AS STRING) AS sm FROM numbers"),
    Case("double to string", "SELECT id, CAST(d AS STRING) AS sd FROM numbers"),
    Case("timestamp to string", "SELECT order_id, CAST(ts AS STRING) AS s FROM orders WHERE order_id < 8"),
    Case("timestamp to date", "SELECT order_id, CAST(ts AS DATE) AS d FROM orders WHERE order_id < 4"),
    Case("string to date and timestamp", "SELECT CAST('2024-03-01' AS DATE) AS d, "
                                         "CAST('2024-03-01 10:11:12.345' AS TIMESTAMP(3)) AS t"),
    Case("int to boolean", "SELECT id, CAST(a AS BOOLEAN) AS x FROM numbers"),
    Case("try cast to int", "SELECT id, s, TRY_CAST(s AS INT) AS x FROM numbers"),
    Case("try cast to double", "SELECT id, s, TRY_CAST(s AS DOUBLE) AS x FROM numbers"),
    Case("try cast to decimal", "SELECT id, s, TRY_CAST(s AS DECIMAL(10, 2)) AS x FROM numbers"),
    Case("try cast to bigint", "SELECT id, s, TRY_CAST(s AS BIGINT) AS x FROM numbers"),
    Case("cast valid strings", "SELECT id, CAST(s AS INT) AS x FROM numbers WHERE id IN (1, 2, 5, 9)"),
    Case("cast invalid string fails", "SELECT id, CAST(s AS INT) AS x FROM numbers"),
    Case("price to string", "SELECT order_id, CAST(price AS STRING) AS p FROM orders WHERE order_id < 6"),
    Case("cast to varchar", "SELECT id, CAST(a AS VARCHAR(20)) AS x FROM numbers"),
    Case("timestamp to ltz and back", "SELECT order_id, CAST(CAST(ts AS TIMESTAMP_LTZ(3)) AS TIMESTAMP(3)) AS t "
                                      "FROM orders WHERE order_id < 5"),
    Case("ltz as string", "SELECT order_id, CAST(CAST(ts AS TIMESTAMP_LTZ(3)) AS STRING) AS t "
                          "FROM orders WHERE order_id < 5"),
]
