"""``python -m tests.benchmarks.report FIGURES.json``: a ``make bench`` run's figures as a markdown report with plots.

Writes ``report.md`` and its PNG plots beside the JSON (or into ``--dir``): the machine and how loaded it was,
the targets met and missed (by how much), the sweep, the interleaved rounds, window latency per load for both
engines, first results and memory. The tables are made here from the figures alone (no clock, no process);
the plots by report_plots.
"""
from __future__ import annotations

import argparse
import os
import sys

from tests.benchmarks import json_figures, targets
from tests.benchmarks.comparison import FLINKBENCH, STRUCTURED_STREAMING, Setup, spread
from tests.benchmarks.figures_read import every_run, first_batches, latency_runs, peaks

LOADED = 0.1  # a run during which others kept more than this share of the cores busy measured a loaded machine
NAMES = {FLINKBENCH: "Flinkbench", STRUCTURED_STREAMING: "Structured Streaming"}


def table(header: list[str], rows: list[list]) -> list[str]:
    cells = [[_cell(v) for v in row] for row in rows]
    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header), *("| " + " | ".join(r) + " |" for r in cells)]


def _cell(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.3g}" if abs(value) < 100 else f"{value:,.0f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def machine_section(figures: dict) -> list[str]:
    m = figures.get("machine", {})
    shares = [r["others_share"] for r in every_run(figures) + latency_runs(figures) if r.get("others_share") is not None]
    worst = max(shares, default=None)
    lines = ["## The machine", "",
             f"{m.get('cores')} cores; Python {m.get('python')}, PySpark {m.get('pyspark')}, {m.get('java')}. Load average "
             f"(1, 5, 15 min) at the start {m.get('load_at_start')}, at the end {m.get('load_at_end')}.", ""]
    if worst is None:
        return lines
    lines.append(f"Other processes kept {spread(shares)['median']:.0%} of the cores busy in the median run and "
                 f"{worst:.0%} at most (the machine's busy CPU less the measured side's, over each measured span).")
    if worst > LOADED:
        lines += ["", f"**Measured on a loaded machine** (others above {LOADED:.0%} of the cores in "
                      f"{sum(s > LOADED for s in shares)} of {len(shares)} runs): these figures are not results."]
    return lines + [""]


def targets_section(figures: dict) -> list[str]:
    marks = {True: "met", False: "**missed**", None: "not measured"}
    rows = [[t.name, t.target, t.measured, marks[t.met], t.by] for t in targets.check(figures)]
    return ["## Targets", "", *table(["what", "target", "measured", "", "missed by"], rows), ""]


def _run_row(run: dict) -> list:
    setup = Setup.from_dict(run["setup"])
    return [NAMES[setup.side], setup.label, run.get("rows_per_s") or run.get("error"), run.get("rows_per_cpu_s"),
            run.get("peak_rss_gib"), run.get("others_share")]


def sweep_section(figures: dict, plots: dict) -> list[str]:
    sweep = figures.get("sweep")
    if not sweep:
        return []
    header = ["side", "batch, JVM", "rows/s", "rows per CPU-s", "peak RSS GiB", "others' share"]
    best = {side: Setup.from_dict(sweep["best"][side]).label for side in sweep["best"]}
    return ["## The sweep", "", "Each side at each batch size with its own JVM options, then at its best size with "
            f"the other's. Best: Flinkbench {best[FLINKBENCH]}; Structured Streaming {best[STRUCTURED_STREAMING]}.",
            "", *_plot(plots, "sweep"), *table(header, [_run_row(r) for r in sweep["runs"]]), ""]


def rounds_section(figures: dict, plots: dict) -> list[str]:
    rounds = figures.get("rounds")
    if not rounds:
        return []
    lines = ["## Interleaved rounds", "", "Each side's best, every run on fresh processes, the order alternating "
             "round by round. Rows per CPU-second count every process of a side (ours: the client, JobManager, "
             "TaskManagers, their JVMs and workers; Structured Streaming: its driver's process tree).", "",
             *_plot(plots, "throughput")]
    for mode, data in rounds.items():
        rows = []
        for i, (ours, theirs) in enumerate(zip(data[FLINKBENCH], data[STRUCTURED_STREAMING])):
            rows.append([i + 1, ours.get("rows_per_s") or ours.get("error"), theirs.get("rows_per_s") or theirs.get("error"),
                         data["ratio"]["per_round"][i], ours.get("rows_per_cpu_s"), theirs.get("rows_per_cpu_s"),
                         data["cpu_ratio"]["per_round"][i]])
        r, c = data["ratio"], data["cpu_ratio"]
        rows.append(["min / median / max", "", "", f"{_cell(r['min'])} / {_cell(r['median'])} / {_cell(r['max'])}",
                     "", "", f"{_cell(c['min'])} / {_cell(c['median'])} / {_cell(c['max'])}"])
        lines += [f"### {mode.replace('_', ' ')}", "", *table(
            ["round", "Flinkbench rows/s", "SS rows/s", "ratio", "Flinkbench rows/CPU-s", "SS rows/CPU-s", "CPU ratio"],
            rows), ""]
    return lines


def latency_section(figures: dict, plots: dict) -> list[str]:
    data = figures.get("latency")
    if not data:
        return []
    triggers = list(data[STRUCTURED_STREAMING])
    header = ["load", "rows/s", "users", *[f"{n} median / max (windows)" for n in
                                           ["Flinkbench", *(f"SS trigger {t}" for t in triggers)]]]
    rows = []
    for i, share in enumerate(data["loads"]):
        runs = [data[FLINKBENCH][i], *(data[STRUCTURED_STREAMING][t][i] for t in triggers)]
        rows.append([f"{share:.0%}", data["rows_per_s"][i], data["users"][i], *(_latency_cell(r) for r in runs)])
    fresh = data.get("fresh_jvms") or {}
    return ["## Window latency at the client", "",
            f"Per window fire: the time its last row reached the client less the window's end, over every window "
            f"of a {figures['settings'].get('latency_measure', 0):g} s span, read on until each arrived. Capacity "
            f"{data['capacity_rows_per_s']:,} rows/s (our median in the rounds); ours in its default configuration "
            f"(adaptive bundles, its TaskManagers' JVM options), checkpoints "
            f"{'every 5 s' if data.get('checkpoints') else 'off'}; Structured Streaming's best trigger "
            f"{data.get('best_trigger')!r} (JVM options: {data.get('structured_streaming_jvm')}).", "",
            *_plot(plots, "latency"), *table(header, rows), "",
            f"First windows of a job on fresh JVMs ({fresh.get('rows_per_s', 0):,} rows/s): "
            f"{', '.join(f'{v:g} s' for v in fresh.get('per_window_s') or []) or fresh.get('error') or '-'} "
            f"({fresh.get('windows', 0)} of {fresh.get('windows_expected', 0)} windows arrived).", ""]


def _latency_cell(run: dict) -> str:
    if run.get("error"):
        return f"failed: {run['error'][:60]}"
    return f"{_cell(run.get('median_s'))} / {_cell(run.get('max_s'))} s ({run.get('windows')} of " \
           f"{run.get('windows_expected')})"


def starts_section(figures: dict, plots: dict) -> list[str]:
    first = figures.get("first_result") or {}
    rows = [["Flinkbench, first result, class archive", *_spread_cells(first.get("with_archive_s"))],
            ["Flinkbench, first result, first-ever start", *_spread_cells(first.get("first_ever_s"))],
            ["Structured Streaming, process start to first batch", *_spread_cells(first_batches(figures))]]
    rows += [[f"{NAMES[side]} peak RSS GiB, {what}", *_spread_cells(values)] for side, what, values in peaks(figures)]
    return ["## First results and memory", "", *_plot(plots, "starts"),
            *table(["what", "min", "median", "max", "runs"], rows), ""]


def _spread_cells(values: list | None) -> list:
    present = [v for v in values or [] if v is not None]
    s = spread(present)
    return [s["min"], s["median"], s["max"], len(present)]


def failures_section(figures: dict) -> list[str]:
    failed = [r for r in every_run(figures) if r.get("error")]
    if not failed:
        return []
    return ["## Runs that failed", "", *(f"- {NAMES[r['setup']['side']]}, {Setup.from_dict(r['setup']).label}: "
                                         f"{r['error']}" for r in failed), ""]


def _plot(plots: dict, name: str) -> list[str]:
    return [f"![{name}]({plots[name]})", ""] if name in plots else []


def markdown(figures: dict, plots: dict[str, str]) -> str:
    """The whole report; ``plots`` names the picture files drawn for it, by plot name."""
    sections = [["# Flinkbench against Spark Structured Streaming: the clicks job", ""], machine_section(figures),
                targets_section(figures), rounds_section(figures, plots), sweep_section(figures, plots),
                latency_section(figures, plots), starts_section(figures, plots), failures_section(figures)]
    return "\n".join(line for section in sections for line in section)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("figures", help="the JSON a run of tests/benchmarks/run_all.py --out wrote")
    parser.add_argument("--dir", help="where to write report.md and its plots (default: beside the JSON)")
    args = parser.parse_args(argv)
    try:
        figures = json_figures.load(args.figures)
    except (OSError, ValueError) as err:
        parser.exit(2, f"report: {err}\n")
    folder = args.dir or os.path.dirname(os.path.abspath(args.figures))
    os.makedirs(folder, exist_ok=True)
    from tests.benchmarks.report_plots import draw_all

    text = markdown(figures, draw_all(figures, folder))
    path = os.path.join(folder, "report.md")
    with open(path, "w") as fh:
        fh.write(text)
    print(f"report: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
