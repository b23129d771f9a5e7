"""Flink SQL reference, Queries > Window JOIN: inner, outer, semi and anti joins of two windowed tables."""
from tests.conformance.pages import Case

PAGE = "Window JOIN"
L = "(SELECT * FROM TABLE(TUMBLE(TABLE orders, DESCRIPTOR(ts), INTERVAL '5' SECOND)))"
R = "(SELECT * FROM TABLE(TUMBLE(TABLE shipments, DESCRIPTOR(sts), INTERVAL '5' SECOND)))"
ON = "L.order_id = R.order_id AND L.window_start = R.window_start AND L.window_end = R.window_end"
CASES = [
    Case("window inner join", f"SELECT L.order_id, R.ship_id, L.window_start FROM {L} L JOIN {R} R ON {ON}"),
    Case("window left join", f"SELECT L.order_id, R.ship_id, L.window_start FROM {L} L LEFT JOIN {R} R ON {ON}"),
    Case("window right join", f"SELECT L.order_id, R.ship_id, R.window_start FROM {L} L RIGHT JOIN {R} R ON {ON}"),
    Case("window full join", f"SELECT L.order_id, R.ship_id, COALESCE(L.window_start, R.window_start) AS ws "
                             f"FROM {L} L FULL JOIN {R} R ON {ON}"),
    Case("window semi join in", f"SELECT L.order_id, L.window_start FROM {L} L WHERE L.order_id IN (SELECT R.order_id "
                                f"FROM {R} R WHERE L.window_start = R.window_start AND L.window_end = R.window_end)"),
    Case("window semi join exists", f"SELECT L.order_id FROM {L} L WHERE EXISTS (SELECT * FROM {R} R WHERE "
                                    "L.order_id = R.order_id AND L.window_start = R.window_start AND "
                                    "L.window_end = R.window_end)"),
    Case("window anti join not in", f"SELECT L.order_id FROM {L} L WHERE L.order_id NOT IN (SELECT R.order_id FROM "
                                    f"{R} R WHERE L.window_start = R.window_start AND L.window_end = R.window_end)"),
    Case("window anti join not exists", f"SELECT L.order_id FROM {L} L WHERE NOT EXISTS (SELECT * FROM {R} R WHERE "
                                        "L.order_id = R.order_id AND L.window_start = R.window_start AND "
                                        "L.window_end = R.window_end)"),
    Case("window join of aggregates", "SELECT L.window_start, L.n, R.m FROM (SELECT window_start, window_end, "
                                      "COUNT(*) AS n FROM TABLE(TUMBLE(TABLE orders, DESCRIPTOR(ts), INTERVAL '5' SECOND)) "
                                      "GROUP BY window_start, window_end) L JOIN (SELECT window_start, window_end, "
                                      "COUNT(*) AS m FROM TABLE(TUMBLE(TABLE shipments, DESCRIPTOR(sts), INTERVAL '5' "
                                      "SECOND)) GROUP BY window_start, window_end) R ON L.window_start = R.window_start "
                                      "AND L.window_end = R.window_end"),
]
