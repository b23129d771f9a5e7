"""The keyed window operator alone: late partials within the allowed lateness re-fire their own window."""
from __future__ import annotations

import random

import pyarrow as pa
import pyarrow.compute  # noqa: F401 - pa.compute

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


AGGREGATES = {"keys": ["user"], "window": {"type": "tumbling", "size_us": 10 * SECOND, "slide_us": 10 * SECOND},
              "aggregates": [{"name": "n", "fn": "count", "column": None}, {"name": "lo", "fn": "min", "column": "v"},
                             {"name": "hi", "fn": "max", "column": "v"}, {"name": "mean", "fn": "avg", "column": "v"}]}


def random_partials(rng: random.Random, users: int, windows: int, rows: int) -> pa.Table:
    """Pre-aggregated rows of the AGGREGATES job: some (user, window) pairs repeat within a bundle, as
    partials from several producers do."""
    picks = [(f"u{rng.randrange(users)}", rng.randrange(windows) * 10) for _ in range(rows)]
    n = [rng.randint(1, 5) for _ in picks]
    v = [[rng.uniform(-1, 1) for _ in range(k)] for k in n]
    return pa.table({"user": [u for u, _ in picks], WINDOW_START: [s * SECOND for _, s in picks],
                     KEY_GROUP_COLUMN: [int(u[1:]) % 7 for u, _ in picks], RECORDS: n, "__p_n": n,
                     "__p_lo": [min(x) for x in v], "__p_hi": [max(x) for x in v],
                     "__p_mean_sum": [sum(x) for x in v], "__p_mean_cnt": n})


def regrouped_by_hand(bundles: list[pa.Table]) -> list[tuple]:
    """The AGGREGATES state of all partials, merged in plain Python: (user, start, key group) -> partials."""
    merged: dict[tuple, list] = {}
    for row in pa.concat_tables(bundles).to_pylist():
        key = (row["user"], row[WINDOW_START], row[KEY_GROUP_COLUMN])
        old = merged.get(key)
        new = [row[RECORDS], row["__p_n"], row["__p_lo"], row["__p_hi"], row["__p_mean_sum"], row["__p_mean_cnt"]]
        merged[key] = new if old is None else [old[0] + new[0], old[1] + new[1], min(old[2], new[2]),
                                               max(old[3], new[3]), old[4] + new[4], old[5] + new[5]]
    return sorted((*k, *v) for k, v in merged.items())


def state_rows(op: WindowOperator) -> list[tuple]:
    columns = ["user", WINDOW_START, KEY_GROUP_COLUMN, RECORDS, "__p_n", "__p_lo", "__p_hi", "__p_mean_sum", "__p_mean_cnt"]
    state = op.snapshot()
    return sorted(tuple(r[c] for c in columns) for r in state.to_pylist()) if state is not None else []


def assert_same_state(got: list[tuple], expected: list[tuple]) -> None:
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g[:6] == e[:6] and g[8] == e[8], (g, e)
        assert abs(g[6] - e[6]) < 1e-9 and abs(g[7] - e[7]) < 1e-9, (g, e)


def test_merging_bundle_by_bundle_gives_the_state_of_one_regroup_of_all_partials():
    # Bundles are merged into a small table of their own, folded into the large one now and then: the state
    # must equal grouping every partial at once.
    rng = random.Random(3)
    # Large bundles first (many new pairs, folded in), then small ones (only known pairs).
    bundles = [random_partials(rng, 50, 3, rng.randint(1, 40)) for _ in range(30)]
    bundles += [random_partials(rng, 50, 3, rng.randint(1, 3)) for _ in range(20)]
    op = WindowOperator(AGGREGATES)
    for bundle in bundles:
        op.process(bundle)
    assert op.partials.delta is not None, "the last small bundles were kept apart from the merged state"
    assert_same_state(state_rows(op), regrouped_by_hand(bundles))


def test_windows_fired_and_dropped_at_the_watermark_are_merged_from_both_tables():
    op = WindowOperator({**AGGREGATES, "allowed_lateness_us": 0})
    rng = random.Random(5)
    first = random_partials(rng, 20, 2, 200)  # windows [0, 10) and [10, 20)
    op.process(first)
    second = random_partials(rng, 20, 2, 5)
    op.process(second)
    assert op.partials.delta is not None and op.partials.delta.num_rows, "the second bundle waits in the delta"
    fired = op.on_watermark(10 * SECOND - 1)  # [0, 10) fires from both tables and is dropped
    expected = [r for r in regrouped_by_hand([first, second]) if r[1] == 0]
    assert sorted((r["user"], r["n"], r["lo"], r["hi"]) for r in fired.to_pylist()) == \
        [(u, n, lo, hi) for u, _, _, _, n, lo, hi, _, _ in expected]
    later = random_partials(rng, 20, 2, 6)
    later = later.filter(pa.compute.greater_equal(later.column(WINDOW_START), pa.scalar(10 * SECOND)))
    op.process(later)
    assert_same_state(state_rows(op), [r for r in regrouped_by_hand([first, second, later]) if r[1] == 10 * SECOND])


def test_bundles_over_the_same_keys_leave_the_merged_state_as_it_is():
    # Each bundle of a steady stream holds keys the state has (all users click in every 100 ms): its merge
    # must regroup the bundle with the small delta only, not the whole state.
    rng = random.Random(7)
    op = WindowOperator(AGGREGATES)
    op.process(random_partials(rng, 400, 1, 2000))
    main = op.partials.main
    for _ in range(5):
        bundle = random_partials(rng, 400, 1, 3)
        op.process(bundle.filter(pa.compute.is_in(bundle.column("user"), main.column("user"))))
        assert op.partials.main is main, "a bundle of known pairs regrouped the whole state"
    state = op.snapshot()
    assert len(set(state.column("user").to_pylist())) == state.num_rows, "one window: one state row per user"


def test_null_keys_are_one_key_and_a_late_one_refires_only_its_window():
    def with_users(table: pa.Table, *users) -> pa.Table:
        return table.set_column(0, "user", pa.array(users, pa.string()))

    op = WindowOperator(PARAMS)
    op.process(with_users(partials(("a", 0, 1)), None))
    op.process(with_users(partials(("a", 0, 2), ("b", 0, 1)), None, "ben"))
    out = op.on_watermark(15 * SECOND)
    assert sorted((r["user"] or "", r["n"]) for r in out.to_pylist()) == [("", 3), ("ben", 1)]
    refired = op.process(with_users(partials(("x", 0, 4)), None))
    assert [(r["user"], r["n"]) for r in refired.to_pylist()] == [(None, 7)], "ben's window is unchanged"


SESSIONS = {"keys": ["user"], "window": {"type": "session", "gap_us": 10 * SECOND},
            "aggregates": [{"name": "n", "fn": "count", "column": None}, {"name": "total", "fn": "sum", "column": "v"},
                           {"name": "kinds", "fn": "count_distinct", "column": "v"}]}


def raw(*rows: tuple) -> pa.Table:
    """(user, event time in s, v) raw rows as session windows receive them."""
    return pa.table({"user": [u for u, _, _ in rows], "__ts": [t * SECOND for _, t, _ in rows],
                     "v": [v for _, _, v in rows], KEY_GROUP_COLUMN: [0 for _ in rows]})


def test_sessions_close_a_gap_after_their_last_row_and_count_distinct_values():
    op = WindowOperator(SESSIONS)
    op.process(raw(("ana", 0, 1), ("ana", 5, 1), ("ben", 3, 2), ("ana", 30, 4), (None, 1, 5), (None, 2, None)))
    out = op.on_watermark(20 * SECOND)  # ana [0, 15) and ben [3, 13) and null's [1, 12) are closed; ana's 30 s row not
    got = sorted(((r["user"] or ""), r["window_start"].timestamp(), r["window_end"].timestamp(), r["n"], r["total"],
                  r["kinds"]) for r in out.to_pylist())
    assert got == [("", 1, 12, 2, 5, 1), ("ana", 0, 15, 2, 2, 1), ("ben", 3, 13, 1, 2, 1)]
    assert op.state_rows == 1
    op.process(raw(("ana", 35, 6)))
    out = op.on_watermark(50 * SECOND)
    assert [(r["user"], r["n"], r["total"], r["kinds"]) for r in out.to_pylist()] == [("ana", 2, 10, 2)]


def test_a_user_defined_aggregate_gets_each_windows_values_as_a_pandas_series():
    import pandas as pd

    seen = []

    def spread(values):
        seen.append(type(values))
        return float(values.max() - values.min())

    params = {"keys": ["user"], "window": {"type": "tumbling", "size_us": 10 * SECOND, "slide_us": 10 * SECOND},
              "aggregates": [{"name": "spread", "fn": "udf", "column": "v"}]}
    op = WindowOperator(params, {"spread": spread})
    op.process(raw(("ana", 1, 3), ("ana", 2, 7), ("ben", 4, 1)).append_column(WINDOW_START, pa.array([0, 0, 0])))
    out = op.on_watermark(10 * SECOND)
    assert sorted((r["user"], r["spread"]) for r in out.to_pylist()) == [("ana", 4.0), ("ben", 0.0)]
    assert seen == [pd.Series, pd.Series]
