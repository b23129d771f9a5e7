"""Bundle sizing: aim at the target time, grow at most 4x, shrink at most by half, stay in bounds; a
rate-limited source starts at its rate and keeps close to its pace."""
from runtime.taskmanager.bundles import backpressured_bundle_size, first_bundle_size, wait_before_reading
from runtime.taskmanager.bundles import next_bundle_size as _next_bundle_size


def test_fast_bundles_grow_toward_the_target_time():
    assert _next_bundle_size(1_000, 0.05, 0.5, 100, 1_000_000) == 4_000  # 10x under target, capped at 4x
    assert _next_bundle_size(1_000, 0.25, 0.5, 100, 1_000_000) == 2_000


def test_slow_bundles_shrink_but_not_below_the_floor():
    assert _next_bundle_size(8_000, 2.0, 0.5, 100, 1_000_000) == 4_000  # at most halved per step
    assert _next_bundle_size(150, 5.0, 0.5, 100, 1_000_000) == 100


def test_sizes_stay_within_bounds():
    assert _next_bundle_size(900_000, 0.01, 0.5, 100, 1_000_000) == 1_000_000
    assert _next_bundle_size(1_000, 0.0, 0.5, 100, 1_000_000) == 2_000


def test_a_costly_spark_action_makes_bundles_grow_past_the_target_time():
    # 2 s of fixed cost per action: shrinking cannot make a bundle quick, so aim at 2 x 2 s instead;
    # a bundle that took no more than that fixed cost grows as fast as it may.
    assert _next_bundle_size(1_000, 2.4, 0.5, 100, 1_000_000, overhead=2.4) == 4_000
    assert _next_bundle_size(10_000, 4.0, 0.5, 100, 1_000_000, overhead=2.4) == 15_000
    assert _next_bundle_size(1_000, 2.4, 0.5, 100, 1_000_000, overhead=0.1) == 500


def test_bundles_of_mostly_fixed_cost_grow_by_the_time_their_rows_took():
    # 0.4 s of fixed cost, 0.01 s for the rows: only the rows' part scales, so grow 4x (not 0.8/0.41 = 2x)
    assert _next_bundle_size(1_000, 0.41, 0.5, 100, 1_000_000, overhead=0.4) == 4_000
    # at the aim (2 x 0.4 s) the size holds
    assert _next_bundle_size(400_000, 0.8, 0.5, 100, 1_000_000, overhead=0.4) == 400_000


def test_a_rate_limited_source_starts_with_what_its_rate_brings_in_one_target_time():
    assert first_bundle_size(435_000.0, 0.5, 1_000, 1_000_000) == 217_500
    assert first_bundle_size(100.0, 0.5, 1_000, 1_000_000) == 1_000
    assert first_bundle_size(1e9, 0.5, 1_000, 1_000_000) == 1_000_000
    assert first_bundle_size(None, 0.5, 1_000, 1_000_000) == 1_000
    # a source that starts behind (event time the wall clock, its job deployed seconds after it was built)
    assert first_bundle_size(500.0, 0.5, 1_000, 1_000_000, due=10_000) == 10_000, "the whole backlog at once"
    assert first_bundle_size(1e6, 0.5, 1_000, 1_000_000, due=30_000_000) == 1_000_000
    assert first_bundle_size(500.0, 0.5, 1_000, 1_000_000, due=10) == 1_000


def seconds_behind(rate: float, fixed_s: float, rows_per_s: float, until_s: float) -> float:
    """The source loop's sizing against a model of its Spark action (``fixed_s`` + rows / ``rows_per_s``):
    how many seconds of rows a rate-limited source is behind its pace at the last bundle before ``until_s``."""
    t, emitted, overhead = 0.0, 0, None
    size = first_bundle_size(rate, 0.5, 1_000, 1_000_000)
    behind = 0.0
    while t < until_s:
        want = min(size, int(rate * t) - emitted)
        if want <= 0:
            t += 0.05
            continue
        took = fixed_s + want / rows_per_s
        t, emitted = t + took, emitted + want
        overhead = took if overhead is None else min(overhead, took)
        size = _next_bundle_size(size, took, 0.5, 1_000, 1_000_000, overhead)
        behind = (rate * t - emitted) / rate
    return behind


def test_a_source_at_half_its_capacity_keeps_within_a_bundle_of_its_pace_from_the_start():
    # 0.4 s per Spark action, 900,000 rows/s of row work, 435,000 rows/s due: a bundle takes about 0.8 s
    # in the steady state. Ramping up from 1,000 rows, the source fell about 3.4 s behind within 5 s and
    # stayed there, since only the spare capacity drains a backlog.
    assert seconds_behind(435_000.0, 0.4, 900_000.0, until_s=5.0) < 1.0
    assert seconds_behind(435_000.0, 0.4, 900_000.0, until_s=20.0) < 1.0
    assert seconds_behind(435_000.0, 0.15, 900_000.0, until_s=20.0) < 0.4


def test_a_backpressured_source_sizes_bundles_to_what_its_consumers_take_in_a_target_time():
    # 50,000 rows left in 10 s (mostly waiting for credit): consumers take 5,000 rows/s.
    assert backpressured_bundle_size(400_000, rows=50_000, elapsed=10.0, target=0.5, lo=1_000) == 2_500
    assert backpressured_bundle_size(400_000, rows=500, elapsed=10.0, target=0.5, lo=1_000) == 1_000, "floor"
    assert backpressured_bundle_size(2_000, rows=50_000, elapsed=1.0, target=0.5, lo=1_000) == 2_000, "never grows"
    assert backpressured_bundle_size(2_000, rows=0, elapsed=0.0, target=0.5, lo=1_000) == 2_000


def test_a_paced_source_waits_for_a_bundles_floor_or_max_wait_but_not_for_its_first_bundle():
    assert wait_before_reading(200, 1_000, 0.0, 2.0, 500.0) == 1.6, "until 1,000 rows are due"
    assert wait_before_reading(200, 1_000, 1.5, 2.0, 500.0) == 0.5, "at most 2 s since the last read"
    assert wait_before_reading(200, 1_000, 2.0, 2.0, 500.0) == 0.0
    assert wait_before_reading(1_000, 1_000, 0.0, 2.0, 500.0) == 0.0
    assert wait_before_reading(0, 1_000, 5.0, 2.0, 500.0) == 0.002, "never for no rows at all"
    assert wait_before_reading(200, 1_000, 0.0, 2.0, 500.0, first=True) == 0.0, "the first bundle: at once"
    assert wait_before_reading(0, 1_000, 0.0, 2.0, 500.0, first=True) == 0.002, "as soon as a row is due"
