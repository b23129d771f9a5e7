"""The report's pictures, drawn with matplotlib (no display: the Agg backend) into PNG files: throughput per
round, the sweep, window latency per load for both engines, and the bars of first results and memory.
Each function draws what the figures hold and returns the file's name, or None when there is nothing to draw."""
from __future__ import annotations

import os

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

from tests.benchmarks import targets  # noqa: E402
from tests.benchmarks.comparison import FLINKBENCH, STRUCTURED_STREAMING, spread  # noqa: E402
from tests.benchmarks.figures_read import first_batches, peaks  # noqa: E402

COLOURS = {FLINKBENCH: "#1f77b4", STRUCTURED_STREAMING: "#d62728", "default": "#d62728", "best": "#ff9896"}
NAMES = {FLINKBENCH: "Flinkbench", STRUCTURED_STREAMING: "Structured Streaming"}


def _save(fig, folder: str, name: str) -> str:
    fig.tight_layout()
    fig.savefig(os.path.join(folder, name), dpi=110)
    plt.close(fig)
    return name


def throughput_rounds(figures: dict, folder: str) -> str | None:
    """Rows/s of each side's best per round, without and with checkpoints, the ratio over each pair."""
    rounds = figures.get("rounds")
    if not rounds:
        return None
    fig, axes = plt.subplots(1, len(rounds), figsize=(5.5 * len(rounds), 3.8), squeeze=False)
    for ax, (mode, data) in zip(axes[0], rounds.items()):
        count = len(data[FLINKBENCH])
        for k, side in enumerate((FLINKBENCH, STRUCTURED_STREAMING)):
            rates = [(r.get("rows_per_s") or 0) / 1e6 for r in data[side]]
            ax.bar([i + (k - 0.5) * 0.38 for i in range(count)], rates, 0.38, label=NAMES[side], color=COLOURS[side])
        for i, ratio in enumerate(data["ratio"]["per_round"]):
            top = max((data[s][i].get("rows_per_s") or 0) / 1e6 for s in (FLINKBENCH, STRUCTURED_STREAMING))
            ax.annotate("failed" if ratio is None else f"{ratio:.2f}x", (i, top), ha="center", va="bottom")
        ax.set_xticks(range(count), [f"round {i + 1}" for i in range(count)])
        ax.set_ylabel("M rows/s")
        ax.set_title(f"{mode.replace('_', ' ')} (ratio over each round; target {targets.MIN_RATIO:g}x)")
        ax.margins(y=0.15)
        ax.legend(loc="lower right", fontsize="small")
    return _save(fig, folder, "throughput-rounds.png")


def sweep(figures: dict, folder: str) -> str | None:
    """Rows/s by micro-batch size for each side and JVM profile; our adaptive sizing as a line across."""
    runs = figures.get("sweep", {}).get("runs")
    if not runs:
        return None
    fig, ax = plt.subplots(figsize=(7, 4))
    lines: dict[tuple[str, str], list[tuple[int, float]]] = {}
    for r in runs:
        setup, rate = r["setup"], r.get("rows_per_s")
        if rate is None:
            continue
        if setup["rows_per_batch"] is None:
            ax.axhline(rate / 1e6, color=COLOURS[FLINKBENCH], linestyle=":", label=f"Flinkbench adaptive, {setup['jvm']}")
            continue
        lines.setdefault((setup["side"], setup["jvm"]), []).append((setup["rows_per_batch"], rate))
    for (side, jvm), points in sorted(lines.items()):
        points.sort()
        ax.plot([p[0] / 1e6 for p in points], [p[1] / 1e6 for p in points], color=COLOURS[side],
                marker="o" if jvm == "flinkbench-jvm" else "s", fillstyle="full" if jvm == "flinkbench-jvm" else "none",
                markersize=8, linestyle="-" if len(points) > 1 else "none", label=f"{NAMES[side]}, {jvm}")
    ax.set_xscale("log")
    ax.set_xlabel("M rows per micro-batch (all cores)")
    ax.set_ylabel("M rows/s")
    ax.set_title("the sweep: each side by batch size")
    ax.legend(fontsize="small")
    return _save(fig, folder, "sweep.png")


def latency(figures: dict, folder: str) -> str | None:
    """Each window's latency (dots) and the median per load (line) of ours and of Structured Streaming with its
    default and its best trigger; the 1 s watermark lag, the floor for both, drawn across."""
    data = figures.get("latency")
    if not data:
        return None
    shares = [share * 100 for share in data["loads"]]
    series = [(NAMES[FLINKBENCH], data[FLINKBENCH], COLOURS[FLINKBENCH], -0.6)]
    for k, (trigger, runs) in enumerate(data[STRUCTURED_STREAMING].items()):
        series.append((f"Structured Streaming, trigger {trigger}", runs, COLOURS["default" if k == 0 else "best"],
                       0.6 * (k + 1)))
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for label, runs, colour, shift in series:
        for share, run in zip(shares, runs):
            values = run.get("per_window_s") or []
            ax.scatter([share + shift] * len(values), values, s=12, color=colour, alpha=0.5)
        medians = [run.get("median_s") for run in runs]
        ax.plot([s + shift for s in shares], medians, marker="D", color=colour, label=label)
    ax.axhline(1.0, color="grey", linestyle="--", linewidth=1, label="watermark lag (1 s)")
    ax.axhline(targets.LATENCY_MEDIAN_S, color="green", linestyle=":", linewidth=1,
               label=f"target median (< {targets.LATENCY_MEDIAN_S:g} s)")
    ax.set_xticks(shares, [f"{s:g} %" for s in shares])
    ax.set_xlabel("load, share of Flinkbench's capacity")
    ax.set_ylabel("s from window end to the client")
    ax.set_ylim(bottom=0)
    ax.set_title("window latency per fire")
    ax.legend(fontsize="small")
    return _save(fig, folder, "latency.png")


def starts_and_memory(figures: dict, folder: str) -> str | None:
    """Bars: seconds to a first result (with the class archive, first-ever, Structured Streaming's first batch)
    and peak memory of each side, each bar the median with every run as a dot."""
    first = figures.get("first_result") or {}
    bars = [("Flinkbench\nclass archive", first.get("with_archive_s") or [], COLOURS[FLINKBENCH]),
            ("Flinkbench\nfirst-ever", first.get("first_ever_s") or [], "#aec7e8"),
            ("Structured Streaming\nfirst batch", first_batches(figures), COLOURS[STRUCTURED_STREAMING])]
    memory = [(f"{NAMES[side]}\n{what}", values, COLOURS[side]) for side, what, values in peaks(figures)]
    if not any(values for _, values, _ in bars + memory):
        return None
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for ax, group, unit in ((axes[0], bars, "s to a first result"), (axes[1], memory, "peak RSS, GiB")):
        for i, (_, values, colour) in enumerate(group):
            present = [v for v in values if v is not None]
            ax.bar(i, spread(present)["median"] or 0, color=colour)
            ax.scatter([i] * len(present), present, color="black", s=10, zorder=3)
        ax.set_xticks(range(len(group)), [label for label, _, _ in group], fontsize="small")
        ax.set_ylabel(unit)
    for limit in (targets.FIRST_RESULT_S, targets.FIRST_EVER_S):
        axes[0].axhline(limit, color="green", linestyle=":", linewidth=1)
    axes[1].axhline(targets.CLUSTER_PEAK_GIB, color="green", linestyle=":", linewidth=1)
    axes[0].set_title(f"first result (targets {targets.FIRST_RESULT_S:g} s, first-ever {targets.FIRST_EVER_S:g} s)")
    axes[1].set_title(f"memory, throughput rounds (cluster target {targets.CLUSTER_PEAK_GIB:g} GiB)")
    return _save(fig, folder, "starts-memory.png")


def draw_all(figures: dict, folder: str) -> dict[str, str]:
    """Every plot the figures allow, by name: file name in ``folder``."""
    drawn = {name: draw(figures, folder) for name, draw in
             (("throughput", throughput_rounds), ("sweep", sweep), ("latency", latency), ("starts", starts_and_memory))}
    return {name: file for name, file in drawn.items() if file}
