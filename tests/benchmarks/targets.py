"""What a benchmark run must show, each target read from its figures: measured, met or missed, and by how much.

The targets are those the performance work set itself: at least 1.3x Structured Streaming's best in every
round, with and without checkpoints; window latency at the client with a median under 1.3 s and a maximum under
1.5 s at each load, and below Structured Streaming's at each; the first windows on fresh JVMs within 3 s of
their end; a first result under 8 s with the class archive and under 12 s on a first-ever start; a cluster
that peaks at 1.5 GiB or less. A target whose figures were not measured is neither met nor missed (None).
Pure: figures in, rows out.
"""
from __future__ import annotations

from dataclasses import dataclass

from tests.benchmarks.comparison import FLINKBENCH
from tests.benchmarks.figures_read import cluster_peak, ss_best_latency

MIN_RATIO = 1.3
LATENCY_MEDIAN_S = 1.3
LATENCY_MAX_S = 1.5
FRESH_WINDOW_S = 3.0
FIRST_RESULT_S = 8.0
FIRST_EVER_S = 12.0
CLUSTER_PEAK_GIB = 1.5


@dataclass(frozen=True)
class Target:
    name: str
    target: str
    measured: str
    met: bool | None
    by: str = ""  # how far a missed target is from being met


def check(figures: dict) -> list[Target]:
    """Every target, in the order the report lists them."""
    return [*throughput_targets(figures), *latency_targets(figures), *start_targets(figures),
            memory_target(figures)]


def _fmt(value, unit: str = "") -> str:
    return "-" if value is None else f"{value:g}{unit}"


def throughput_targets(figures: dict) -> list[Target]:
    out = []
    for mode, title in (("without_checkpoints", "without checkpoints"), ("with_checkpoints", "with checkpoints")):
        ratio = figures.get("rounds", {}).get(mode, {}).get("ratio", {})
        per_round = ratio.get("per_round") or []
        lowest = None if not per_round or None in per_round else min(per_round)
        met = None if lowest is None else lowest >= MIN_RATIO
        by = "" if met in (None, True) else f"lowest round {MIN_RATIO - lowest:.2f}x short"
        out.append(Target(f"throughput {title}, every round", f">= {MIN_RATIO}x Structured Streaming's best",
                          ", ".join(_fmt(r, "x") for r in per_round) or "-", met, by))
    return out


def latency_targets(figures: dict) -> list[Target]:
    latency = figures.get("latency")
    if not latency:
        return [Target("window latency", "measured", "-", None)]
    out = []
    for i, share in enumerate(latency["loads"]):
        ours = latency[FLINKBENCH][i]
        out.append(load_target(share, ours))
        median, theirs = ours.get("median_s"), ss_best_latency(latency, i)
        met = None if median is None or theirs is None else median < theirs
        out.append(Target(f"latency at {share:.0%} load against Structured Streaming", "lower median",
                          f"{_fmt(median, ' s')} against {_fmt(theirs, ' s')}", met,
                          f"{median - theirs:+.2f} s" if met is False else ""))
    fresh = latency.get("fresh_jvms") or {}
    most, missing = fresh.get("max_s"), len(fresh.get("missing") or [])
    shortfall = [f"slowest {most - FRESH_WINDOW_S:+.2f} s"] if most is not None and most > FRESH_WINDOW_S else []
    shortfall += [f"missing windows: {missing}"] if missing else []
    met = None if fresh.get("error") or not fresh.get("windows_expected") else not shortfall
    out.append(Target("first windows on fresh JVMs", f"each within {FRESH_WINDOW_S:g} s of its end",
                      f"{', '.join(_fmt(v, ' s') for v in fresh.get('per_window_s') or []) or '-'}", met,
                      ", ".join(shortfall)))
    return out


def load_target(share: float, ours: dict) -> Target:
    """Our median and max at one load, every window of the span arrived."""
    median, most = ours.get("median_s"), ours.get("max_s")
    missing = len(ours.get("missing") or [])
    shortfall = []
    if median is not None and median >= LATENCY_MEDIAN_S:
        shortfall.append(f"median {median - LATENCY_MEDIAN_S:+.2f} s")
    if most is not None and most >= LATENCY_MAX_S:
        shortfall.append(f"max {most - LATENCY_MAX_S:+.2f} s")
    if missing:
        shortfall.append(f"missing windows: {missing}")
    met = None if ours.get("error") or not ours.get("windows_expected") else not shortfall
    return Target(f"latency at {share:.0%} load", f"median < {LATENCY_MEDIAN_S} s, max < {LATENCY_MAX_S} s",
                  f"median {_fmt(median, ' s')}, max {_fmt(most, ' s')}, {ours.get('windows', 0)} of "
                  f"{ours.get('windows_expected', 0)} windows", met, ", ".join(shortfall))


def start_targets(figures: dict) -> list[Target]:
    first = figures.get("first_result") or {}
    out = []
    for key, limit, title in (("with_archive_s", FIRST_RESULT_S, "first result, class archive built"),
                              ("first_ever_s", FIRST_EVER_S, "first result, first-ever start")):
        runs = first.get(key) or []
        slowest = None if not runs or None in runs else max(runs)
        met = None if slowest is None else slowest < limit
        out.append(Target(title, f"< {limit:g} s every run", ", ".join(_fmt(v, " s") for v in runs) or "-", met,
                          f"slowest {slowest - limit:+.2f} s" if met is False else ""))
    return out


def memory_target(figures: dict) -> Target:
    peak = cluster_peak(figures)
    met = None if peak is None else peak <= CLUSTER_PEAK_GIB
    return Target("cluster peak memory (RSS, over the rounds)", f"<= {CLUSTER_PEAK_GIB:g} GiB", _fmt(peak, " GiB"),
                  met, f"{peak - CLUSTER_PEAK_GIB:+.3f} GiB" if met is False else "")
