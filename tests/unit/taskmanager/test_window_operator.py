"""The keyed window operator alone: late partials within the allowed lateness re-fire their own window."""
from __future__ import annotations

import pyarrow as pa

from runtime.keygroups import KEY_GROUP_COLUMN
from runtime.taskmanager.window_operator import RECORDS, WINDOW_START, WindowOperator

SECOND = 1_000_000  # us
PARAMS = {"keys": ["user"], "window": {"type": "tumbling", "size_us": 10 * SECOND, "slide_us": 10 * SECOND},
          "aggregates": [{"name": "n", "fn": "count", "column": None}], "allowed_lateness_us": 60 * SECOND}


def partials(*rows: tuple[str, int, int]) -> pa.Table:
    """(user, window start in s, rows) partials as the pre-aggregation sends them."""
    return pa.table({"user": [u for u, _, _ in rows], WINDOW_START: [s * SECOND for _, s, _ in rows],
                     RECORDS: [n for _, _, n in rows], "__p_n": [n for _, _, n in rows],
                     KEY_GROUP_COLUMN: [len(u) for u, _, _ in rows]})


def fired(table) -> list[tuple]:
    return sorted((r["user"], int(r["window_start"].timestamp()), r["n"]) for r in table.to_pylist())


def test_a_late_row_refires_only_its_own_keys_window():
    op = WindowOperator(PARAMS)
    assert op.process(partials(("ana", 0, 2), ("ben", 0, 3), ("ben", 10, 1))) is None
    assert fired(op.on_watermark(15 * SECOND)) == [("ana", 0, 2), ("ben", 0, 3)]
    assert fired(op.process(partials(("ana", 0, 1), ("ben", 10, 1)))) == [("ana", 0, 3)], \
        "ben's [0, 10) is unchanged and ben's [10, 20) has not fired: neither is emitted"
    assert fired(op.on_watermark(25 * SECOND)) == [("ben", 10, 2)]
    assert op.late_records == 0
