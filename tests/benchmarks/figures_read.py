"""Readers of a benchmark run's figures (the JSON run_all writes), shared by its targets, its report's tables and
its plots: every run of a part, the runs of each side over the rounds, and the figures taken across them."""
from __future__ import annotations

from tests.benchmarks.comparison import FLINKBENCH, STRUCTURED_STREAMING, spread


def round_runs(figures: dict, side: str) -> list[dict]:
    """``side``'s runs over the rounds, without and with checkpoints."""
    return [r for mode in (figures.get("rounds") or {}).values() for r in mode.get(side, [])]


def every_run(figures: dict) -> list[dict]:
    """Every throughput run of the figures, of the sweep and of the rounds."""
    return [*figures.get("sweep", {}).get("runs", []), *round_runs(figures, FLINKBENCH),
            *round_runs(figures, STRUCTURED_STREAMING)]


def latency_runs(figures: dict) -> list[dict]:
    """Every latency run of the figures: ours on fresh JVMs and at each load, Structured Streaming's."""
    latency = figures.get("latency") or {}
    theirs = [r for runs in (latency.get(STRUCTURED_STREAMING) or {}).values() for r in runs]
    fresh = [latency["fresh_jvms"]] if latency.get("fresh_jvms") else []
    return [*fresh, *latency.get(FLINKBENCH, []), *theirs, *latency.get("trigger_sweep", [])]


def first_batches(figures: dict) -> list[float]:
    """Seconds from Structured Streaming's process start to its first micro-batch, over its rounds."""
    return [r["first_batch_s"] for r in round_runs(figures, STRUCTURED_STREAMING) if r.get("first_batch_s") is not None]


def peaks(figures: dict) -> list[tuple[str, str, list]]:
    """(side, what, peak RSS GiB of each round run): ours with and without the client, theirs whole."""
    ours = round_runs(figures, FLINKBENCH)
    return [(FLINKBENCH, "cluster + client", [r.get("peak_rss_gib") for r in ours]),
            (FLINKBENCH, "cluster", [r.get("cluster_peak_rss_gib") for r in ours]),
            (STRUCTURED_STREAMING, "process tree", [r.get("peak_rss_gib") for r in round_runs(figures, STRUCTURED_STREAMING)])]


def cluster_peak(figures: dict) -> float | None:
    """The largest peak RSS of our cluster (without the client) over the rounds."""
    return spread([r.get("cluster_peak_rss_gib") for r in round_runs(figures, FLINKBENCH)])["max"]


def ss_best_latency(latency: dict, i: int) -> float | None:
    """Structured Streaming's lowest median at load ``i`` over the triggers it ran."""
    medians = [runs[i].get("median_s") for runs in latency.get(STRUCTURED_STREAMING, {}).values() if i < len(runs)]
    return spread(medians)["min"]
