"""MATCH_RECOGNIZE and event-time temporal joins on a real cluster, each answer compared with Apache Flink 2.3's
(PyFlink over the same files, in the background while the cluster runs the same queries).

The inputs are out of order by less than their watermarks' delay, so no row is late in either engine however
it bundles them (Flink emits watermarks every 200 ms of wall-clock time, Flinkbench after every bundle)."""
from __future__ import annotations

import concurrent.futures
import datetime

import pytest

from runtime.table import StreamTableEnvironment
from runtime.changelog import materialize
from tests.helpers.sql_suite import normalized

pytestmark = pytest.mark.slow

BASE = datetime.datetime(2024, 5, 1, 9, 0, 0)
PRICES = {  # V shapes, a flat stretch and a NULL
    "ACME": [12, 17, 19, 21, 25, 18, 15, 14, 24, 25, 19, 18, 17, 30, 31, 20, 21],
    "Δelta": [5, 4, 3, 2, 9, 9, 8, 7, None, 6, 11, 3, 2, 1, 4],
    "ZZ": [-3, -5, -9, -2, -2, -1, -4, -6, 0, 7, 6],
}
V_SHAPE = """SELECT * FROM ticker MATCH_RECOGNIZE (PARTITION BY symbol ORDER BY rowtime
  MEASURES START_ROW.rowtime AS start_tstamp, LAST(PRICE_DOWN.rowtime) AS bottom_tstamp,
    LAST(PRICE_UP.rowtime) AS end_tstamp, START_ROW.price - LAST(PRICE_DOWN.price) AS drop_by
  ONE ROW PER MATCH AFTER MATCH SKIP TO LAST PRICE_UP
  PATTERN (START_ROW PRICE_DOWN+ PRICE_UP)
  DEFINE PRICE_DOWN AS (LAST(PRICE_DOWN.price, 1) IS NULL AND PRICE_DOWN.price < START_ROW.price)
      OR PRICE_DOWN.price < LAST(PRICE_DOWN.price, 1),
    PRICE_UP AS PRICE_UP.price > LAST(PRICE_DOWN.price, 1)) AS MR"""
QUERIES = {
    "v shape": V_SHAPE,
    "rises per window": "SELECT window_start, COUNT(*) AS rises, MAX(gain) AS best FROM TABLE(TUMBLE(TABLE rises, "
                        "DESCRIPTOR(mt), INTERVAL '5' SECOND)) GROUP BY window_start, window_end",
    "temporal join": "SELECT o.order_id, o.amount * r.rate AS converted, r.update_time FROM orders AS o "
                     "JOIN rates FOR SYSTEM_TIME AS OF o.order_time AS r ON o.currency = r.currency",
    "left temporal join": "SELECT o.order_id, o.currency, r.rate FROM orders AS o LEFT JOIN rates FOR SYSTEM_TIME "
                          "AS OF o.order_time AS r ON o.currency = r.currency",
    "temporal join on a versioned view": "SELECT o.order_id, r.rate FROM orders AS o JOIN latest_rates FOR "
                                         "SYSTEM_TIME AS OF o.order_time AS r ON o.currency = r.currency",
}


def _text(t: datetime.datetime) -> str:
    return t.strftime("%Y-%m-%d %H:%M:%S.") + f"{t.microsecond // 1000:03d}"


def _ticker() -> list[str]:
    rows = []
    for n, (symbol, prices) in enumerate(PRICES.items()):
        for i, price in enumerate(prices):
            at = BASE + datetime.timedelta(seconds=i, milliseconds=300 * n)
            rows.append((at, f"{symbol},{_text(at)},{'' if price is None else price}"))
    lines = [line for _, line in sorted(rows)]
    for i in range(0, len(lines) - 1, 4):  # out of order by under a second
        lines[i], lines[i + 1] = lines[i + 1], lines[i]
    return lines


def _orders() -> list[str]:
    currencies = ["EUR", "USD", "EUR", "JPY", "", "EUR", "USD", "GBP", "EUR", "USD", "JPY", "EUR"]
    return [f"{i},{c},{(i * 37) % 50 - 10},{_text(BASE + datetime.timedelta(milliseconds=1500 * i + 250))}"
            for i, c in enumerate(currencies)]


RATES = [("EUR", 1.10, 0), ("USD", 1.0, 0), ("EUR", 1.20, 5), ("JPY", 0.01, 6), ("EUR", 1.25, 6), ("EUR", 1.30, 9),
         ("USD", 0.90, 11), ("JPY", 0.02, 13), ("EUR", 1.40, 14), ("USD", 0.80, 16)]


def _rates() -> list[str]:
    return [f"{c},{r},{_text(BASE + datetime.timedelta(seconds=s))}" for c, r, s in RATES]


def _ddl(folder) -> list[str]:
    files = {"ticker": _ticker(), "orders": _orders(), "rates": _rates(), "rates_log": _rates()}
    for name, lines in files.items():
        (folder / name).mkdir(parents=True, exist_ok=True)
        (folder / name / "part-0.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    csv = "'format' = 'csv', 'csv.null-literal' = ''"
    return [
        f"CREATE TABLE ticker (symbol STRING, rowtime TIMESTAMP(3), price BIGINT, WATERMARK FOR rowtime AS rowtime - "
        f"INTERVAL '2' SECOND) WITH ('connector' = 'filesystem', 'path' = '{folder / 'ticker'}', {csv})",
        f"CREATE TABLE orders (order_id BIGINT, currency STRING, amount BIGINT, order_time TIMESTAMP(3), WATERMARK FOR "
        f"order_time AS order_time - INTERVAL '2' SECOND) WITH ('connector' = 'filesystem', 'path' = "
        f"'{folder / 'orders'}', {csv})",
        f"CREATE TABLE rates (currency STRING, rate DOUBLE, update_time TIMESTAMP(3), WATERMARK FOR update_time AS "
        f"update_time - INTERVAL '2' SECOND, PRIMARY KEY (currency) NOT ENFORCED) WITH ('connector' = 'filesystem', "
        f"'path' = '{folder / 'rates'}', {csv})",
        f"CREATE TABLE rates_log (currency STRING, rate DOUBLE, update_time TIMESTAMP(3), WATERMARK FOR update_time AS "
        f"update_time - INTERVAL '2' SECOND) WITH ('connector' = 'filesystem', 'path' = '{folder / 'rates_log'}', {csv})",
        "CREATE VIEW latest_rates AS SELECT currency, rate, update_time FROM (SELECT *, ROW_NUMBER() OVER (PARTITION "
        "BY currency ORDER BY update_time DESC) AS rn FROM rates_log) WHERE rn = 1",
        "CREATE VIEW rises AS SELECT * FROM ticker MATCH_RECOGNIZE (PARTITION BY symbol ORDER BY rowtime MEASURES "
        "MATCH_ROWTIME() AS mt, B.price - A.price AS gain AFTER MATCH SKIP PAST LAST ROW PATTERN (A B) "
        "DEFINE B AS B.price > A.price)",
    ]


@pytest.fixture(scope="module")
def answers(cluster, tmp_path_factory):
    """(Flink's answers, Flinkbench's final tables) to every query; PyFlink runs while the cluster does."""
    from tests.helpers.flink_sql import flink_answers

    folder = tmp_path_factory.mktemp("patterns")
    statements = _ddl(folder / "data")
    with concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="pyflink") as pool:
        flink = pool.submit(flink_answers, statements, QUERIES, folder / "pyflink")
        env = cluster.environment()
        env.set_parallelism(2)
        t_env = StreamTableEnvironment.create(env)
        for statement in statements:
            t_env.execute_sql(statement)
        ours = {name: normalized(materialize(list(t_env.execute_sql(q).collect()))) for name, q in QUERIES.items()}
        return flink.result(), ours


@pytest.mark.parametrize("name", list(QUERIES))
def test_the_answer_is_flinks(answers, name):
    flink, ours = answers
    assert "error" not in flink[name], f"Flink could not run {name}: {flink[name].get('error')}"
    assert ours[name], f"{name} selects nothing, so it proves nothing"
    assert normalized(flink[name]["rows"]) == ours[name], f"{name}: Flinkbench {ours[name]}"


def test_the_v_shape_finds_each_fall_and_its_rise(answers):
    """ACME read off by hand: 25 falls to 14 and rises at 24; 25 falls to 17 and rises at 30 (a rise is above the
    second-lowest price of the fall: LAST(PRICE_DOWN.price, 1))."""
    _, ours = answers
    at = lambda s: BASE + datetime.timedelta(seconds=s)  # noqa: E731
    assert [row[1:] for row in ours["v shape"] if row[0] == "ACME"] == [(at(4), at(7), at(8), 11),
                                                                       (at(9), at(12), at(13), 8)]
