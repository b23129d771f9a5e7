"""The SQL query suite: input files, the tables over them, and each query with its Spark batch twin.

Every case runs on Flinkbench (its final table: the changelog applied), on Spark batch SQL over the same
files, and, where Apache Flink 2.3 runs it as written, on PyFlink too; all three answers must agree.
The inputs are small CSV files (no header, Flink's CSV) with event times 100 ms apart, at most 400 ms
out of order (payments: 3.4 s), so watermarks 1 s (payments: 4 s) behind the largest time drop no row,
whichever way the rows are bundled: Flink watermarks every row, Flinkbench every bundle.
"""
from __future__ import annotations

import datetime
import math
from dataclasses import dataclass
from pathlib import Path

BASE = datetime.datetime(2024, 1, 1, 12, 0, 0)
CLICKS, USERS, PAYMENTS = 600, 11, 120


@dataclass
class Case:
    name: str
    sql: str  # Flink SQL, run on Flinkbench (and on Flink when ``flink``)
    spark: str | None = None  # Spark SQL giving the same table; None: the same text
    flink: bool = True  # Apache Flink runs ``sql`` as written
    batch: bool = False  # run Flinkbench in batch mode (else streaming, the changelog applied)


def write_inputs(folder: Path, split: bool = True) -> dict[str, Path]:
    """The input files (deterministic), one folder per table; ``split``: clicks in two files."""
    paths = {name: folder / name for name in ("clicks", "users", "payments")}
    for path in paths.values():
        path.mkdir(parents=True, exist_ok=True)
    urls = ["/home", "/cart", "/pay", "/help", "/search"]
    clicks = []
    for i in range(1, CLICKS + 1):
        ts = BASE + datetime.timedelta(milliseconds=i * 100 - (i * 37) % 400)
        amount = "" if i % 23 == 0 else f"{(i * 7919 % 1000) / 10:.1f}"
        clicks.append(f"{i},{(i * 31) % 13},{urls[(i * 17) % 5]},{amount},{_ts(ts)}")
    # Two files make two source splits (and bundles, so updating results retract); Flink is given one file, since
    # it marks a source reader without a split idle and hands out splits last first: a reader could read the later
    # file first (or alone) and drop the earlier one's rows as late.
    halves = (clicks[:300], clicks[300:]) if split else (clicks,)
    for n, half in enumerate(halves):
        (paths["clicks"] / f"part-{n}.csv").write_text("\n".join(half) + "\n")
    tiers = ["gold", "silver", "bronze"]
    users = [f"{u},user{u},{tiers[u % 3]}" for u in range(USERS)]
    (paths["users"] / "users.csv").write_text("\n".join(users) + "\n")
    payments = []
    for p in range(1, PAYMENTS + 1):
        click = p * 5
        ts = BASE + datetime.timedelta(milliseconds=click * 100 - (click * 37) % 400 + (p * 613) % 3000)
        payments.append(f"{p},{click},{(p * 13) % 50 + 1},{_ts(ts)}")
    (paths["payments"] / "payments.csv").write_text("\n".join(payments) + "\n")
    return paths


def _ts(t: datetime.datetime) -> str:
    return t.strftime("%Y-%m-%d %H:%M:%S.") + f"{t.microsecond // 1000:03d}"


SCHEMAS = {
    "clicks": "id BIGINT, user_id BIGINT, url STRING, amount DOUBLE, ts TIMESTAMP",
    "users": "uid BIGINT, name STRING, tier STRING",
    "payments": "pid BIGINT, click_id BIGINT, value INT, pts TIMESTAMP",
}


def ddl(paths: dict[str, Path]) -> list[str]:
    """The CREATE TABLE statements over the input files (Flink SQL)."""
    return [
        f"""CREATE TABLE clicks (id BIGINT, user_id BIGINT, url STRING, amount DOUBLE, ts TIMESTAMP(3),
              WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
            WITH ('connector' = 'filesystem', 'path' = '{paths["clicks"]}', 'format' = 'csv',
                  'csv.null-literal' = '')""",
        f"""CREATE TABLE users (uid BIGINT, name STRING, tier STRING)
            WITH ('connector' = 'filesystem', 'path' = '{paths["users"]}', 'format' = 'csv')""",
        f"""CREATE TABLE payments (pid BIGINT, click_id BIGINT, `value` INT, pts TIMESTAMP(3),
              WATERMARK FOR pts AS pts - INTERVAL '4' SECOND)
            WITH ('connector' = 'filesystem', 'path' = '{paths["payments"]}', 'format' = 'csv')""",
        # a left interval join keeps the clicks' time attribute: windows over it see every row on time
        """CREATE VIEW clicks_and_payments AS SELECT c.id, c.ts, p.`value` FROM clicks AS c LEFT JOIN payments AS p
             ON c.id = p.click_id AND p.pts BETWEEN c.ts AND c.ts + INTERVAL '2' SECOND""",
    ]


CASES = [
    Case("projection", "SELECT id, url, amount * 2 AS doubled FROM clicks"),
    Case("filter", "SELECT id, user_id FROM clicks WHERE amount > 50 AND url <> '/help'"),
    Case("scalar functions", "SELECT id, UPPER(url) AS u, CHAR_LENGTH(url) AS l, ROUND(amount, 0) AS r, "
                             "COALESCE(amount, -1) AS c, CONCAT(url, '#', CAST(id AS STRING)) AS tag FROM clicks "
                             "WHERE id <= 50"),
    Case("case and cast", "SELECT id, CASE WHEN amount IS NULL THEN 'none' WHEN amount < 30 THEN 'low' ELSE 'high' END "
                          "AS band, CAST(amount AS INT) AS whole FROM clicks"),
    Case("time functions", "SELECT id, DATE_FORMAT(ts, 'yyyy-MM-dd HH:mm') AS at_minute, EXTRACT(SECOND FROM ts) AS s, "
                           "HOUR(ts) AS h FROM clicks WHERE id <= 40"),
    Case("floor to", "SELECT FLOOR(ts TO MINUTE) AS m, COUNT(*) AS n FROM clicks GROUP BY FLOOR(ts TO MINUTE)",
         "SELECT date_trunc('MINUTE', ts) AS m, COUNT(*) AS n FROM clicks GROUP BY date_trunc('MINUTE', ts)"),
    Case("split index", "SELECT id, SPLIT_INDEX(url, '/', 1) AS part FROM clicks WHERE id <= 20",
         "SELECT id, try_element_at(split(url, '/'), 2) AS part FROM clicks WHERE id <= 20"),
    Case("union all", "SELECT id, url FROM clicks WHERE id < 10 UNION ALL SELECT uid, name FROM users"),
    Case("distinct", "SELECT DISTINCT url FROM clicks"),
    Case("group by", "SELECT user_id, COUNT(*) AS n, SUM(amount) AS s, MIN(amount) AS lo, MAX(amount) AS hi "
                     "FROM clicks GROUP BY user_id"),
    Case("group by count column", "SELECT url, COUNT(amount) AS with_amount, COUNT(DISTINCT user_id) AS users "
                                  "FROM clicks GROUP BY url"),
    Case("global aggregate", "SELECT COUNT(*) AS n, AVG(amount) AS a FROM clicks"),
    Case("average of integers", "SELECT click_id % 3 AS k, AVG(`value`) AS a FROM payments GROUP BY click_id % 3",
         "SELECT click_id % 3 AS k, CAST(AVG(`value`) AS INT) AS a FROM payments GROUP BY click_id % 3"),
    Case("having", "SELECT url, COUNT(*) AS n FROM clicks GROUP BY url HAVING COUNT(*) > 119"),
    Case("aggregate of aggregate", "SELECT n, COUNT(*) AS users FROM (SELECT user_id, COUNT(*) AS n FROM clicks "
                                   "GROUP BY user_id) GROUP BY n"),
    Case("group by in batch mode", "SELECT url, SUM(amount) AS s FROM clicks GROUP BY url", batch=True),
    Case("tumble", "SELECT window_start, window_end, user_id, COUNT(*) AS n, SUM(amount) AS s FROM TABLE(TUMBLE(TABLE "
                   "clicks, DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY window_start, window_end, user_id",
         "SELECT window.start AS window_start, window.end AS window_end, user_id, COUNT(*) AS n, SUM(amount) AS s "
         "FROM clicks GROUP BY window(ts, '10 seconds'), user_id"),
    Case("tumble count distinct", "SELECT window_start, url, COUNT(DISTINCT user_id) AS users, COUNT(*) AS n FROM "
                                  "TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '10' SECOND)) "
                                  "GROUP BY window_start, window_end, url",
         "SELECT window.start AS window_start, url, COUNT(DISTINCT user_id) AS users, COUNT(*) AS n FROM clicks "
         "GROUP BY window(ts, '10 seconds'), url"),
    Case("tumble global", "SELECT window_start, COUNT(*) AS n, MAX(amount) AS m FROM TABLE(TUMBLE(TABLE clicks, "
                          "DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY window_start, window_end",
         "SELECT window.start AS window_start, COUNT(*) AS n, MAX(amount) AS m FROM clicks GROUP BY window(ts, '5 seconds')"),
    Case("tumble in batch mode", "SELECT window_start, url, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE clicks, "
                                 "DESCRIPTOR(ts), INTERVAL '20' SECOND)) GROUP BY window_start, window_end, url",
         "SELECT window.start AS window_start, url, COUNT(*) AS n FROM clicks GROUP BY window(ts, '20 seconds'), url",
         batch=True),
    Case("hop", "SELECT window_start, window_end, url, COUNT(*) AS n FROM TABLE(HOP(TABLE clicks, DESCRIPTOR(ts), "
                "INTERVAL '5' SECOND, INTERVAL '15' SECOND)) GROUP BY window_start, window_end, url",
         "SELECT window.start AS window_start, window.end AS window_end, url, COUNT(*) AS n FROM clicks "
         "GROUP BY window(ts, '15 seconds', '5 seconds'), url"),
    Case("cumulate", "SELECT window_start, window_end, COUNT(*) AS n, SUM(amount) AS s FROM TABLE(CUMULATE(TABLE "
                     "clicks, DESCRIPTOR(ts), INTERVAL '10' SECOND, INTERVAL '30' SECOND)) GROUP BY window_start, window_end",
         "SELECT w.start AS window_start, timestampadd(SECOND, k * 10, w.start) AS window_end, COUNT(*) AS n, "
         "SUM(amount) AS s FROM (SELECT *, window(ts, '30 seconds') AS w FROM clicks) "
         "LATERAL VIEW explode(sequence(1, 3)) AS k WHERE ts < timestampadd(SECOND, k * 10, w.start) "
         "GROUP BY w.start, k"),
    Case("session", "SELECT window_start, window_end, user_id, COUNT(*) AS n FROM TABLE(SESSION(TABLE clicks "
                    "PARTITION BY user_id, DESCRIPTOR(ts), INTERVAL '2' SECOND)) GROUP BY window_start, window_end, user_id",
         "SELECT session_window.start AS window_start, session_window.end AS window_end, user_id, COUNT(*) AS n "
         "FROM clicks GROUP BY session_window(ts, '2 seconds'), user_id"),
    Case("top n", "SELECT * FROM (SELECT id, user_id, amount, ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY "
                  "amount DESC, id) AS rn FROM clicks WHERE amount IS NOT NULL) WHERE rn <= 3"),
    Case("top n without number", "SELECT id, url, amount FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY url "
                                 "ORDER BY amount DESC, id) AS rn FROM clicks WHERE amount IS NOT NULL) WHERE rn <= 2"),
    Case("order by limit", "SELECT id, amount FROM clicks WHERE amount IS NOT NULL ORDER BY amount DESC, id LIMIT 5"),
    Case("limit with nulls first", "SELECT id, url, amount FROM clicks ORDER BY amount, id LIMIT 4"),
    Case("order by in batch mode", "SELECT url, COUNT(*) AS n FROM clicks GROUP BY url ORDER BY url", batch=True,
         flink=False),  # Flink streaming sorts on a time attribute only
    Case("deduplicate", "SELECT id, user_id, ts FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY ts "
                        "ASC) AS rn FROM clicks) WHERE rn = 1"),
    Case("over rows", "SELECT id, user_id, SUM(amount) OVER (PARTITION BY user_id ORDER BY ts ROWS BETWEEN 2 PRECEDING "
                      "AND CURRENT ROW) AS s3 FROM clicks"),
    Case("over range", "SELECT id, COUNT(*) OVER (PARTITION BY url ORDER BY ts RANGE BETWEEN INTERVAL '2' SECOND "
                       "PRECEDING AND CURRENT ROW) AS recent FROM clicks"),
    Case("inner join", "SELECT c.id, u.name, u.tier FROM clicks AS c JOIN users AS u ON c.user_id = u.uid"),
    Case("left join", "SELECT c.id, c.user_id, u.name FROM clicks AS c LEFT JOIN users AS u ON c.user_id = u.uid "
                      "WHERE c.id <= 100"),
    Case("join of aggregates", "SELECT u.tier, SUM(t.n) AS n FROM (SELECT user_id, COUNT(*) AS n FROM clicks "
                               "GROUP BY user_id) AS t JOIN users AS u ON t.user_id = u.uid GROUP BY u.tier"),
    Case("full join", "SELECT u.uid, t.user_id, t.n FROM users AS u FULL JOIN (SELECT user_id, COUNT(*) AS n FROM "
                      "clicks GROUP BY user_id) AS t ON u.uid = t.user_id"),
    Case("interval join", "SELECT c.id, p.pid, p.`value` FROM clicks AS c JOIN payments AS p ON c.id = p.click_id "
                          "AND p.pts BETWEEN c.ts AND c.ts + INTERVAL '2' SECOND"),
    Case("left interval join", "SELECT c.id, p.pid, p.`value` FROM clicks AS c LEFT JOIN payments AS p ON c.id = p.click_id "
                               "AND p.pts BETWEEN c.ts AND c.ts + INTERVAL '2' SECOND WHERE c.id <= 200"),
    Case("tumble over a left interval join", "SELECT window_start, window_end, COUNT(*) AS n, COUNT(`value`) AS paid, "
                                             "SUM(`value`) AS v FROM TABLE(TUMBLE(TABLE clicks_and_payments, DESCRIPTOR(ts), "
                                             "INTERVAL '10' SECOND)) GROUP BY window_start, window_end",
         "SELECT window.start AS window_start, window.end AS window_end, COUNT(*) AS n, COUNT(p.`value`) AS paid, "
         "SUM(p.`value`) AS v FROM clicks c LEFT JOIN payments p ON c.id = p.click_id AND p.pts BETWEEN c.ts AND "
         "c.ts + INTERVAL 2 SECONDS GROUP BY window(c.ts, '10 seconds')"),
    Case("window join", "SELECT L.user_id, L.window_start, L.n, R.total FROM (SELECT window_start, window_end, user_id, "
                        "COUNT(*) AS n FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY "
                        "window_start, window_end, user_id) L JOIN (SELECT window_start, window_end, user_id, "
                        "SUM(amount) AS total FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '10' SECOND)) "
                        "GROUP BY window_start, window_end, user_id) R ON L.user_id = R.user_id AND "
                        "L.window_start = R.window_start AND L.window_end = R.window_end",
         "SELECT user_id, window.start AS window_start, COUNT(*) AS n, SUM(amount) AS total FROM clicks "
         "GROUP BY window(ts, '10 seconds'), user_id"),
    Case("window tvf join", "SELECT L.id, R.pid FROM (SELECT * FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), "
                            "INTERVAL '5' SECOND))) L JOIN (SELECT * FROM TABLE(TUMBLE(TABLE payments, DESCRIPTOR(pts), "
                            "INTERVAL '5' SECOND))) R ON L.id = R.click_id AND L.window_start = R.window_start AND "
                            "L.window_end = R.window_end",
         "SELECT c.id, p.pid FROM clicks c JOIN payments p ON c.id = p.click_id AND "
         "floor(unix_millis(c.ts) / 5000) = floor(unix_millis(p.pts) / 5000)"),
    Case("hop left window join", "SELECT L.id, R.pid, L.window_start FROM (SELECT * FROM TABLE(HOP(TABLE clicks, "
                                 "DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND))) L LEFT JOIN (SELECT * FROM "
                                 "TABLE(HOP(TABLE payments, DESCRIPTOR(pts), INTERVAL '5' SECOND, INTERVAL '10' SECOND))) R "
                                 "ON L.id = R.click_id AND L.window_start = R.window_start AND L.window_end = R.window_end",
         "SELECT c.id, p.pid, c.w.start AS window_start FROM (SELECT *, window(ts, '10 seconds', '5 seconds') AS w "
         "FROM clicks) c LEFT JOIN (SELECT *, window(pts, '10 seconds', '5 seconds') AS w FROM payments) p "
         "ON c.id = p.click_id AND c.w = p.w"),
    Case("hop rows", "SELECT id, window_start, window_end FROM TABLE(HOP(TABLE clicks, DESCRIPTOR(ts), INTERVAL '5' "
                     "SECOND, INTERVAL '15' SECOND)) WHERE id <= 30",
         "SELECT id, w.start AS window_start, w.end AS window_end FROM (SELECT id, window(ts, '15 seconds', "
         "'5 seconds') AS w FROM clicks WHERE id <= 30)"),
    Case("cumulate rows", "SELECT id, window_start, window_end FROM TABLE(CUMULATE(TABLE clicks, DESCRIPTOR(ts), "
                          "INTERVAL '10' SECOND, INTERVAL '30' SECOND)) WHERE id <= 120",
         "SELECT id, w.start AS window_start, timestampadd(SECOND, k * 10, w.start) AS window_end FROM (SELECT id, ts, "
         "window(ts, '30 seconds') AS w FROM clicks WHERE id <= 120) LATERAL VIEW explode(sequence(1, 3)) AS k "
         "WHERE ts < timestampadd(SECOND, k * 10, w.start)"),
    Case("values", "SELECT * FROM (VALUES (1, 'a'), (2, 'b')) AS t(x, y)", "SELECT * FROM VALUES (1, 'a'), (2, 'b') AS t(x, y)"),
]

def spark_text(case: Case) -> str:
    """The Spark SQL of a case (its own, or its Flink text transpiled)."""
    if case.spark is not None:
        return case.spark
    import sqlglot

    from runtime.sql.dialect import Flink
    from runtime.sql.functions import translate

    return translate(sqlglot.parse_one(case.sql, read=Flink)).sql(dialect="spark")


def normalized(rows: list) -> list[tuple]:
    """Rows comparable across engines: floats rounded, times as naive UTC, sorted."""
    def value(v):
        if isinstance(v, float):
            return None if math.isnan(v) else round(v, 6)
        if isinstance(v, datetime.datetime):
            return v.replace(tzinfo=None) if v.tzinfo is None else v.astimezone(datetime.timezone.utc).replace(tzinfo=None)
        if hasattr(v, "item"):
            return value(v.item())
        return v
    return sorted((tuple(value(v) for v in r) for r in rows), key=repr)
