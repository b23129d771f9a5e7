"""Bundle sizing: aim at the target time, grow at most 4x, shrink at most by half, stay in bounds."""
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
    # 2 s of fixed cost per action: shrinking cannot make a bundle quick, so aim at 2 x 2 s instead.
    assert _next_bundle_size(1_000, 2.4, 0.5, 100, 1_000_000, overhead=2.4) == 2_000
    assert _next_bundle_size(1_000, 2.4, 0.5, 100, 1_000_000, overhead=0.1) == 500
