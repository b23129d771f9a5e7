"""Flink SQL reference, Queries > Pattern Recognition: MATCH_RECOGNIZE with its quantifiers, skip strategies,
navigation, aggregates, WITHIN and MATCH_ROWTIME, over prices of three symbols (one non-ASCII) with negative
prices, a NULL and rows out of order by under the watermark's 2 s."""
import datetime

from tests.conformance.pages import Case
from tests.conformance.tables import BASE, Table

PAGE = "Pattern Recognition (MATCH_RECOGNIZE)"
PRICES = {
    "ACME": [12, 17, 19, 21, 25, 18, 15, 14, 24, 25, 19, 18, 17, 30, 31, 20, 21, 13, 9, 16],
    "Ünïcode": [7, 9, 10, 5, 10, 7, 14, 3, None, 2, 1, 8, 30, 29, 28, 31],
    "neg": [-3, -5, -9, -2, -2, -1, -4, -6, 0, 7, 6, -8, -9, 5],
}


def _ticks() -> list[tuple]:
    rows = []
    for n, (symbol, prices) in enumerate(PRICES.items()):
        for i, price in enumerate(prices):
            at = BASE + datetime.timedelta(seconds=i, milliseconds=250 * n + 7 * i)
            rows.append((symbol, price, (i * 7) % 4 - 1, at))
    rows.sort(key=lambda r: r[3])
    for i in range(0, len(rows) - 1, 5):  # out of order, by under a second
        rows[i], rows[i + 1] = rows[i + 1], rows[i]
    return rows


TABLES = [Table("ticks", "symbol STRING, price INT, tax INT, rowtime TIMESTAMP(3)", _ticks(),
                "rowtime AS rowtime - INTERVAL '2' SECOND")]
VIEWS = ["CREATE VIEW tick_rises AS SELECT * FROM ticks MATCH_RECOGNIZE (PARTITION BY symbol ORDER BY rowtime "
         "MEASURES MATCH_ROWTIME() AS mt, B.price - A.price AS gain AFTER MATCH SKIP PAST LAST ROW PATTERN (A B) "
         "DEFINE B AS B.price > A.price)"]


def mr(measures: str, pattern: str, define: str, extra: str = "", partition: str = "PARTITION BY symbol",
       order: str = "rowtime") -> str:
    return f"SELECT * FROM ticks MATCH_RECOGNIZE ({partition} ORDER BY {order} MEASURES {measures} {extra} " \
           f"PATTERN ({pattern}) DEFINE {define}) AS T"


V_DEFINE = "DOWN AS (LAST(DOWN.price, 1) IS NULL AND DOWN.price < STRT.price) OR DOWN.price < LAST(DOWN.price, 1), " \
           "UP AS UP.price > LAST(DOWN.price, 1)"
SUMS = "SUM(A.price) AS total, FIRST(rowtime) AS first_at, LAST(rowtime) AS last_at"
CASES = [
    Case("mr v shape", mr("STRT.rowtime AS start_at, LAST(DOWN.rowtime) AS bottom_at, LAST(UP.rowtime) AS end_at",
                          "STRT DOWN+ UP", V_DEFINE, "ONE ROW PER MATCH AFTER MATCH SKIP TO LAST UP")),
    Case("mr v shape past last row", mr("FIRST(DOWN.price) AS top, LAST(DOWN.price) AS bottom, UP.price AS up",
                                        "STRT DOWN+ UP", V_DEFINE, "AFTER MATCH SKIP PAST LAST ROW")),
    Case("mr average below", mr("FIRST(A.rowtime) AS start_at, LAST(A.rowtime) AS end_at, AVG(A.price) AS avg_price",
                                "A+ B", "A AS AVG(A.price) < 15", "AFTER MATCH SKIP PAST LAST ROW")),
    Case("mr greedy", mr("C.price AS last_price, COUNT(B.price) AS bs", "A B* C",
                         "A AS A.price > 10, B AS B.price < 15, C AS C.price > 12", "AFTER MATCH SKIP PAST LAST ROW")),
    Case("mr reluctant", mr("C.price AS last_price, COUNT(B.price) AS bs", "A B*? C",
                            "A AS A.price > 10, B AS B.price < 15, C AS C.price > 12", "AFTER MATCH SKIP PAST LAST ROW")),
    Case("mr skip past last row", mr(SUMS, "A+ C", "A AS SUM(A.price) < 30", "AFTER MATCH SKIP PAST LAST ROW")),
    Case("mr skip to next row", mr(SUMS, "A+ C", "A AS SUM(A.price) < 30", "AFTER MATCH SKIP TO NEXT ROW")),
    Case("mr skip to last", mr(SUMS, "S A+ C", "A AS SUM(A.price) < 30", "AFTER MATCH SKIP TO LAST A")),
    Case("mr within", mr("A.price AS a, LAST(B.price) AS b, COUNT(B.price) AS n", "A B+? C",
                         "B AS B.price >= A.price, C AS C.price < A.price - 3", "").replace(
        "DEFINE", "WITHIN INTERVAL '3' SECOND DEFINE")),
    Case("mr exactly two", mr("A.price AS a, FIRST(B.price) AS b1, LAST(B.price) AS b2, C.price AS c", "A B{2} C",
                              "B AS B.price > A.price, C AS C.price < A.price")),
    Case("mr zero to two", mr("A.price AS a, COUNT(B.price) AS nb, C.price AS c", "A B{0,2} C",
                              "B AS B.price > A.price, C AS C.price < A.price")),
    Case("mr two or more", mr("A.price AS a, COUNT(B.price) AS nb, C.price AS c", "A B{2,} C",
                              "B AS B.price > A.price, C AS C.price < A.price")),
    Case("mr optional", mr("A.price AS a, B.price AS b, C.price AS c", "A B? C",
                           "B AS B.price > A.price, C AS C.price < A.price")),
    Case("mr default variable", mr("FIRST(B.price) AS fb, LAST(price) AS lp, COUNT(*) AS n, SUM(price) AS s",
                                   "A B+ C", "B AS price > LAST(price, 1), C AS price < LAST(price, 1)")),
    Case("mr offsets", mr("FIRST(B.price, 1) AS fb1, LAST(B.price, 1) AS lb1, LAST(B.price * B.tax) AS bt, "
                          "A.price - C.price AS diff", "A B+ C",
                          "B AS LAST(B.price, 1) IS NULL OR B.price > LAST(B.price, 1), C AS C.price < B.price")),
    Case("mr aggregates", mr("MIN(B.price) AS lo, MAX(B.price) AS hi, SUM(B.tax) AS t, AVG(B.price) AS a, "
                             "COUNT(B.price) AS n", "A B+ C", "B AS B.price > A.price, C AS C.price < A.price")),
    Case("mr no partition", mr("A.symbol AS s1, B.symbol AS s2, B.price - A.price AS gain", "A B",
                               "B AS B.price > A.price + 10", "AFTER MATCH SKIP PAST LAST ROW", partition="")),
    Case("mr order by price too", mr("A.price AS a, B.price AS b", "A B", "B AS B.price < A.price",
                                     order="rowtime, price DESC")),
    Case("mr case and null", mr("A.price AS a, CASE WHEN B.price IS NULL THEN 'none' ELSE 'some' END AS kind",
                                "A B", "B AS B.price IS NULL OR B.price < A.price", "AFTER MATCH SKIP PAST LAST ROW")),
    Case("mr match rowtime window", "SELECT window_start, COUNT(*) AS rises, MAX(gain) AS best FROM TABLE(TUMBLE("
                                    "TABLE tick_rises, DESCRIPTOR(mt), INTERVAL '5' SECOND)) GROUP BY window_start, "
                                    "window_end"),
    Case("mr filtered and counted", "SELECT symbol, COUNT(*) AS n, SUM(gain) AS g FROM tick_rises WHERE gain > 1 "
                                    "GROUP BY symbol"),
]
