"""``make bench``: the reference job "clicks" on Flinkbench and on Spark Structured Streaming, compared fairly.

1. sweep: both sides at 2, 5, 10 and 20 M rows per micro-batch (Structured Streaming's ``rate-micro-batch``
   batches; our bundles, taskmanager.bundle.min-rows = max-rows over the two sources; and our default adaptive
   sizing), each with its own JVM options, then each at its best size with the other's options.
2. rounds: each side's best in 3 interleaved rounds (ABBA), without checkpoints and with them (ours every 5 s;
   Structured Streaming with a checkpoint location), every run on fresh processes: rows/s and rows per
   CPU-second of all the side's processes, peak memory (ours: cluster and client; Structured Streaming: its
   process tree at the same 2 GB heap), and the ratio per round with its min, median and max.
3. latency: the time each window reaches the client less its end, at 5, 20 and 50 % of our capacity, read on
   until every window of the measured span has arrived, on both engines (Structured Streaming with its default
   trigger and its best of ``--triggers``); and our first windows on fresh JVMs.
4. first-result: a fresh kernel's ``%flink local`` to a ``%%flink`` cell's rows, with the Spark class archive
   and as a first-ever start without it.

``--out FILE`` writes the figures as JSON, which ``python -m tests.benchmarks.report FILE`` turns into a markdown
report with plots (``make bench-report`` does both). ``--warmup``/``--measure``/``--rounds``/``--sizes`` shorten
a development run; ``--parts`` picks parts (also ``sql``, ``checkpoints``, ``scaling``, left out by default).

Not part of ``make test``: figures depend on the machine and what else runs on it; each run records the share
of the cores other processes kept busy while it measured, and the report flags a loaded machine.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from tests.benchmarks import bench_parts, extra_parts  # noqa: E402
from tests.benchmarks.comparison import STRUCTURED_STREAMING, SWEEP_ROWS, Setup  # noqa: E402
from tests.benchmarks.flinkbench_runs import MEASURE_S, WARMUP_S  # noqa: E402
from tests.benchmarks.json_figures import report  # noqa: E402

FAIR_PARTS = ("sweep", "rounds", "latency", "first-result")
PARTS = (*FAIR_PARTS, "sql", "checkpoints", "scaling")


def _numbers(kind, what: str):
    def parse(text: str) -> list:
        try:
            values = [kind(float(v)) if kind is int else kind(v) for v in text.split(",") if v.strip()]
        except ValueError:
            raise argparse.ArgumentTypeError(f"{what}: comma-separated numbers expected, got {text!r}") from None
        if not values:
            raise argparse.ArgumentTypeError(f"{what}: give at least one")
        return values
    return parse


def parse_args(argv: list[str] | None = None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add = parser.add_argument
    add("--out", help="write the figures as JSON to this file")
    add("--warmup", type=float, default=WARMUP_S, help=f"seconds before measuring (default {WARMUP_S:g})")
    add("--measure", type=float, default=MEASURE_S, help=f"seconds of throughput measured (default {MEASURE_S:g})")
    add("--rounds", type=int, default=3, help="interleaved rounds of the two bests (default 3)")
    add("--sizes", type=_numbers(int, "--sizes"), default=list(SWEEP_ROWS), help="rows per micro-batch to sweep")
    add("--loads", type=_numbers(float, "--loads"), default=[0.05, 0.2, 0.5], help="latency loads, shares of capacity")
    add("--latency-measure", type=float, default=60.0, help="seconds of windows measured per load (default 60)")
    add("--fresh-measure", type=float, default=40.0, help="seconds of first windows measured on fresh JVMs")
    add("--stall", type=float, default=60.0, help="seconds past a span to wait for its last windows (default 60)")
    add("--no-latency-checkpoints", dest="latency_checkpoints", action="store_false",
        help="run our latency job without checkpoints (default: every 5 s)")
    add("--triggers", type=lambda t: [v.strip() for v in t.split(",") if v.strip()],
        default=["default", "100 milliseconds", "1 second"], help="Structured Streaming triggers to try for latency")
    add("--capacity", type=float, help="our rows/s to take latency loads from when the rounds are not run")
    add("--first-result-runs", type=int, default=2)
    add("--checkpoint-keys", type=_numbers(int, "--checkpoint-keys"), default=[10_000, 100_000, 1_000_000])
    add("--scaling", type=_numbers(int, "--scaling"), default=[1, 2, 4], help="parallelisms (= TaskManagers)")
    add("--parts", default=",".join(FAIR_PARTS), help=f"parts to run, comma-separated: {', '.join(PARTS)}")
    args = parser.parse_args(argv)
    args.parts = [p for p in args.parts.split(",") if p]
    unknown = set(args.parts) - set(PARTS)
    if unknown:
        parser.error(f"--parts: unknown parts {sorted(unknown)}; known: {', '.join(PARTS)}")
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    return args


def run(opts) -> dict:
    """Every part ``opts.parts`` names, in order; the figures as the JSON holds them."""
    figures: dict = {"machine": bench_parts.machine(),
                     "settings": {k: v for k, v in vars(opts).items() if k != "out"}}
    parts = opts.parts
    if "sweep" in parts:
        figures["sweep"] = bench_parts.sweep(opts)
    bests = figures.get("sweep", {}).get("best") or bench_parts.default_bests()
    figures["best"] = bests
    if "rounds" in parts:
        figures["rounds"] = bench_parts.rounds(opts, bests)
    if "latency" in parts:
        ss_jvm = Setup.from_dict(bests[STRUCTURED_STREAMING]).jvm
        figures["latency"] = bench_parts.latency(opts, bench_parts.capacity(figures, opts), ss_jvm)
    if "first-result" in parts:
        figures["first_result"] = bench_parts.first_result(opts)
    if "sql" in parts:
        figures["sql"] = extra_parts.sql(opts)
    if "checkpoints" in parts:
        figures["checkpoints"] = extra_parts.checkpoints(opts)
    if "scaling" in parts:
        ss_best = Setup.from_dict(bests[STRUCTURED_STREAMING]).rows_per_batch or max(SWEEP_ROWS)
        figures["scaling"] = extra_parts.scaling(opts, ss_best)
    figures["machine"].update(load_at_end=[round(v, 2) for v in os.getloadavg()], finished_at=round(time.time(), 1))
    return figures


def main(argv: list[str] | None = None) -> int:
    opts = parse_args(argv)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    report(run(opts), opts.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
