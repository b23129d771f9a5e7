"""How many rows a task processes per bundle (one Spark action each): big enough to amortise the
action's fixed cost, small enough to keep latency and memory in bounds."""
from __future__ import annotations


def burst_rows(reader) -> int:
    """How far a rate-limited source may run ahead of its pace to make up for a stall."""
    if reader.max_burst_s is None or reader.rate is None:
        return 2**62
    return max(1, int(reader.max_burst_s * reader.rate))


def next_bundle_size(size: int, took: float, target: float, lo: int, hi: int, overhead: float = 0.0) -> int:
    """Size the next bundle to take about ``max(target, 2 * overhead)``.

    A Spark action has a fixed cost (``overhead``, the quickest bundle seen) that does not shrink with
    the bundle, so a bundle must take at least twice that to spend most of its time on rows; growth is
    at most 4x and shrinking at most half per step, to follow changing input smoothly.
    """
    if took <= 0:
        return min(hi, size * 2)
    aim = max(target, 2 * overhead)
    scaled = int(size * aim / took)
    return max(lo, min(hi, size * 4, max(size // 2, scaled)))
