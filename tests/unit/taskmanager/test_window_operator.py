"""The keyed window operator alone: late partials within the allowed lateness re-fire their own window."""
from __future__ import annotations

import random

import pandas as pd
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


def assert_same_state(state: pd.DataFrame, expected: pd.DataFrame) -> None:
    """Equal state rows, whatever their order (merges append new pairs where a regroup puts them first)."""
    def ordered(frame: pd.DataFrame) -> pd.DataFrame:
        return frame.sort_values(["user", WINDOW_START]).reset_index(drop=True)[expected.columns]
    pd.testing.assert_frame_equal(ordered(state), ordered(expected), check_exact=False, rtol=1e-12)


def test_merging_bundle_by_bundle_gives_the_state_of_one_regroup_of_all_partials():
    # A bundle is merged by looking up its (key, window) rows in an index of the state's: the result
    # must equal grouping every partial at once, with new pairs appended as they come.
    rng = random.Random(3)
    # Large bundles first (many new pairs, appended), then small ones (only known pairs).
    bundles = [random_partials(rng, 50, 3, rng.randint(1, 40)) for _ in range(30)]
    bundles += [random_partials(rng, 50, 3, rng.randint(1, 3)) for _ in range(20)]
    op = WindowOperator(AGGREGATES)
    for bundle in bundles:
        op.process(bundle)
    everything = pa.concat_tables(bundles).to_pandas()
    expected = op._merge(everything)
    assert_same_state(op.state, expected)
    assert op._indexed is op.state, "the last bundles (all pairs known) were merged through the index"


def test_windows_dropped_at_the_watermark_do_not_confuse_later_merges():
    op = WindowOperator({**AGGREGATES, "allowed_lateness_us": 0})
    rng = random.Random(5)
    op.process(random_partials(rng, 20, 2, 200))  # windows [0, 10) and [10, 20)
    op.on_watermark(10 * SECOND - 1)  # [0, 10) fires and is dropped: the rows left move
    later = random_partials(rng, 20, 2, 6)
    later = later.filter(pa.compute.greater_equal(later.column(WINDOW_START), pa.scalar(10 * SECOND)))
    before = op.state.copy()
    op.process(later)
    expected = op._merge(pd.concat([before, later.to_pandas()], ignore_index=True))
    assert_same_state(op.state, expected)


def test_bundles_over_the_same_keys_are_merged_through_one_index():
    # Each bundle of a steady stream holds every key of the state again (all users click in every 100 ms):
    # its merge must look the pairs up in the index built once, not regroup or re-index the state per bundle.
    rng = random.Random(7)
    op = WindowOperator(AGGREGATES)
    op.process(random_partials(rng, 40, 1, 200))
    op.process(random_partials(rng, 40, 1, 200))
    index = op._index
    for _ in range(5):
        bundle = random_partials(rng, 40, 1, 120)
        op.process(bundle.filter(pa.compute.is_in(bundle.column("user"), pa.array(op.state["user"].tolist()))))
        assert op._index is index and op._indexed is op.state, "a bundle of known pairs rebuilt the state's index"
    assert op.state["user"].is_unique, "one window: one state row per user"
