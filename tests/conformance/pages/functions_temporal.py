"""Flink SQL reference, System (Built-in) Functions > Temporal Functions, over the orders' event times."""
from tests.conformance.pages import Case

PAGE = "Functions: temporal"
CASES = [
    Case("fn extract parts", "SELECT order_id, EXTRACT(YEAR FROM ts) AS y, EXTRACT(MONTH FROM ts) AS mo, "
                             "EXTRACT(HOUR FROM ts) AS h, EXTRACT(SECOND FROM ts) AS s FROM orders"),
    Case("fn date part functions", "SELECT order_id, YEAR(ts) AS y, QUARTER(ts) AS q, DAYOFMONTH(ts) AS d, "
                                   "DAYOFWEEK(ts) AS dw, HOUR(ts) AS h, MINUTE(ts) AS mi, SECOND(ts) AS s FROM orders"),
    Case("fn floor and ceil to", "SELECT order_id, FLOOR(ts TO MINUTE) AS f, CEIL(ts TO SECOND) AS c FROM orders"),
    Case("fn date format", "SELECT order_id, DATE_FORMAT(ts, 'yyyy-MM-dd HH:mm:ss') AS text FROM orders"),
    Case("fn timestampadd and diff", "SELECT order_id, TIMESTAMPADD(SECOND, 90, ts) AS later, TIMESTAMPDIFF(SECOND, "
                                     "TIMESTAMP '2024-03-01 09:00:00', ts) AS since FROM orders"),
    Case("fn to timestamp and date", "SELECT TO_TIMESTAMP('2024-03-01 10:20:30') AS t1, TO_TIMESTAMP('01/03/2024', "
                                     "'dd/MM/yyyy') AS t2, TO_DATE('2024-03-01') AS d FROM customers WHERE customer_id = 1"),
    Case("fn unix time", "SELECT order_id, FROM_UNIXTIME(order_id * 3600) AS moment, UNIX_TIMESTAMP('2024-03-01 09:00:00') "
                         "AS u FROM orders WHERE order_id < 5"),
    Case("fn group by minute", "SELECT FLOOR(ts TO MINUTE) AS m, COUNT(*) AS n FROM orders GROUP BY FLOOR(ts TO MINUTE)"),
]
