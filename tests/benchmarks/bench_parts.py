"""The fair parts of ``make bench``: the sweep, the interleaved rounds, window latency at three loads, the first
result. Each takes the run's options (``opts``: run_all's parsed arguments) and what earlier parts found, prints a
line per run as it goes and returns its part of the JSON. A run that fails is recorded with its error (and no
figures) rather than ending the benchmark: the report shows it.
"""
from __future__ import annotations

import os
import time
import traceback

from runtime.cluster import LocalCluster
from runtime.examples import clicks
from tests.benchmarks import flinkbench_runs, structured_streaming
from tests.benchmarks.comparison import (FLINKBENCH, SIDES, STRUCTURED_STREAMING, SWEEP_ROWS, Setup, best,
                                         capacity_loads, interleaved, lowest_median, other_jvm, ratios, spread,
                                         sweep_plan)
from tests.benchmarks.window_latency import users_for_rate

CORES = 2
PASSING = 0.9  # share of clicks rows past the job's filter (amount > 0.1 of uniform [0, 1))


def attempt(run) -> dict:
    """``run()``'s figures, or its error when it raised (printed, and kept in place of the figures)."""
    started, load = time.time(), os.getloadavg()[0]
    try:
        figures = run()
    except Exception as err:  # noqa: BLE001 - one failed run is a figure too: the others go on
        traceback.print_exc()
        figures = {"error": f"{type(err).__name__}: {err}"}
    return {"load1_at_start": round(load, 2), "started_at": round(started, 1), **figures}


def throughput(setup: Setup, opts, checkpoints: bool) -> dict:
    """One throughput run of either side in ``setup``."""
    if setup.side == FLINKBENCH:
        def run():
            return flinkbench_runs.throughput(setup, opts.warmup, opts.measure, checkpoints)
    else:
        def run():
            return structured_streaming.run({"job": "throughput", "cores": CORES, "jvm": setup.jvm,
                                             "rows_per_batch": setup.rows_per_batch, "checkpoints": checkpoints,
                                             "warmup": opts.warmup, "measure": opts.measure})
    figures = {"setup": setup.as_dict(), "checkpoints": checkpoints, **attempt(run)}
    rate = figures.get("rows_per_s")
    print(f"{setup.side}, {setup.label}, checkpoints {'on' if checkpoints else 'off'}: "
          f"{'failed: ' + figures['error'] if rate is None else f'{rate:,} rows/s'}, "
          f"{figures.get('rows_per_cpu_s') or '-'} rows per CPU-second, others kept "
          f"{figures.get('others_share', '-')} of the cores busy", flush=True)
    return figures


def sweep(opts) -> dict:
    """Both sides over the same batch sizes with their own JVM options, interleaved size by size; then each at
    its best size with the other side's JVM options. The best of each side is what the rounds compare."""
    runs = []
    plans = {side: sweep_plan(side, opts.sizes) for side in SIDES}
    for i in range(max(len(p) for p in plans.values())):
        runs += [throughput(plans[side][i], opts, False) for side in SIDES if i < len(plans[side])]
    for side in SIDES:
        runs.append(throughput(other_jvm(best(measured(runs, side))), opts, False))
    return {"runs": runs, "best": {side: best(measured(runs, side)).as_dict() for side in SIDES}}


def measured(runs: list[dict], side: str) -> list[tuple[Setup, float | None]]:
    return [(Setup.from_dict(r["setup"]), r.get("rows_per_s")) for r in runs if r["setup"]["side"] == side]


def default_bests() -> dict:
    """Without a sweep: our default (adaptive bundles) against Structured Streaming's largest swept batches."""
    return {FLINKBENCH: Setup(FLINKBENCH, None, "flinkbench-jvm").as_dict(),
            STRUCTURED_STREAMING: Setup(STRUCTURED_STREAMING, max(SWEEP_ROWS), "spark-defaults").as_dict()}


def rounds(opts, bests: dict) -> dict:
    """Each side's best, in ``opts.rounds`` interleaved rounds, without and then with checkpoints; the ratio of
    rows/s and of rows per CPU-second round by round."""
    out = {}
    for checkpoints in (False, True):
        by_side: dict[str, list] = {side: [None] * opts.rounds for side in SIDES}
        for r, side in interleaved(opts.rounds):
            by_side[side][r] = throughput(Setup.from_dict(bests[side]), opts, checkpoints)
        ours, theirs = by_side[FLINKBENCH], by_side[STRUCTURED_STREAMING]
        out["with_checkpoints" if checkpoints else "without_checkpoints"] = {
            **by_side,
            "ratio": ratios([r.get("rows_per_s") for r in ours], [r.get("rows_per_s") for r in theirs]),
            "cpu_ratio": ratios([r.get("rows_per_cpu_s") for r in ours], [r.get("rows_per_cpu_s") for r in theirs])}
        print(f"rounds, checkpoints {'on' if checkpoints else 'off'}: Flinkbench / Structured Streaming per round "
              f"{out['with_checkpoints' if checkpoints else 'without_checkpoints']['ratio']}", flush=True)
    return out


def capacity(figures: dict, opts) -> float:
    """Our throughput: the median of the rounds without checkpoints, else the sweep's best, else ``--capacity``."""
    rates = [r.get("rows_per_s") for r in figures.get("rounds", {}).get("without_checkpoints", {}).get(FLINKBENCH, [])]
    found = spread(rates)["median"]
    if found is None and "sweep" in figures:
        found = max((r.get("rows_per_s") or 0 for r in figures["sweep"]["runs"] if r["setup"]["side"] == FLINKBENCH),
                    default=0) or None
    found = found or opts.capacity
    if not found:
        raise SystemExit("latency: no capacity to take shares of; measure the rounds or give --capacity")
    return float(found)


def latency(opts, rows_per_s: float, ss_jvm: str) -> dict:
    """Window latency at each share of capacity: ours on one cluster (its first job's first windows on fresh
    JVMs, then each load), Structured Streaming (with ``ss_jvm``, its best JVM profile) with each of
    ``opts.triggers`` at the middle load, then with its default trigger and the best of those at every load
    (the middle load's runs reused)."""
    loads = capacity_loads(rows_per_s, opts.loads)
    ours = flinkbench_latency(opts, loads)
    middle = len(loads) // 2
    tried = {t: ss_latency(opts, loads[middle][1], t, ss_jvm) for t in opts.triggers} if len(opts.triggers) > 1 else {}
    chosen = lowest_median(tried) or "default"
    theirs = {t: [tried[t] if i == middle and t in tried else ss_latency(opts, rate, t, ss_jvm)
                  for i, (_, rate) in enumerate(loads)] for t in dict.fromkeys(["default", chosen])}
    return {"capacity_rows_per_s": round(rows_per_s), "loads": [share for share, _ in loads],
            "rows_per_s": [round(rate) for _, rate in loads], "users": [users(rate) for _, rate in loads],
            "checkpoints": opts.latency_checkpoints, "structured_streaming_jvm": ss_jvm,
            "fresh_jvms": ours["fresh"], FLINKBENCH: ours["loads"],
            "trigger_sweep": list(tried.values()), "best_trigger": chosen, STRUCTURED_STREAMING: theirs}


def users(rate: float) -> int:
    return users_for_rate(rate, flinkbench_runs.WINDOW_S, PASSING, clicks.USERS)


def flinkbench_latency(opts, loads: list[tuple[float, float]]) -> dict:
    ckpt, stall = opts.latency_checkpoints, opts.stall
    with LocalCluster(taskmanagers=2, slots=1, config={"spark.driver.memory": "2g"}) as cluster:
        fresh_rate = loads[min(1, len(loads) - 1)][1]
        fresh = attempt(lambda: flinkbench_runs.latency(
            cluster, fresh_rate, users(fresh_rate), 0.0, opts.fresh_measure, stall, ckpt, from_start=True))
        show("Flinkbench, first windows on fresh JVMs", fresh_rate, fresh)
        out = []
        for _, rate in loads:
            out.append(attempt(lambda rate=rate: flinkbench_runs.latency(
                cluster, rate, users(rate), opts.warmup, opts.latency_measure, stall, ckpt)))
            show("Flinkbench", rate, out[-1])
    return {"fresh": {**fresh, "rows_per_s": round(fresh_rate)}, "loads": out}


def ss_latency(opts, rate: float, trigger: str, jvm: str) -> dict:
    figures = attempt(lambda: structured_streaming.run(
        {"job": "latency", "cores": CORES, "jvm": jvm, "rate": rate, "users": users(rate),
         "trigger": trigger, "warmup": opts.warmup, "measure": opts.latency_measure, "stall": opts.stall}))
    show(f"Structured Streaming, trigger {trigger}", rate, figures)
    return {**figures, "trigger": trigger}


def show(title: str, rate: float, figures: dict) -> None:
    if "error" in figures:
        print(f"{title} at {rate:,.0f} rows/s: failed: {figures['error']}", flush=True)
        return
    print(f"{title} at {rate:,.0f} rows/s: median {figures['median_s']} s, max {figures['max_s']} s over "
          f"{figures['windows']} of {figures['windows_expected']} windows (missing: {figures['missing'] or 'none'})",
          flush=True)


def first_result(opts) -> dict:
    """Seconds to a first ``%%flink`` result in a fresh kernel, with the Spark class archive and as a first-ever
    start without it, alternating."""
    from tests.benchmarks.first_result import first_result_s

    out: dict[str, list] = {"with_archive_s": [], "first_ever_s": []}
    for i in range(opts.first_result_runs):
        for key, first_ever in (("with_archive_s", False), ("first_ever_s", True)):
            figures = attempt(lambda first_ever=first_ever: {"seconds": first_result_s(first_ever=first_ever)})
            out[key].append(figures.get("seconds"))
            print(f"first result in a fresh kernel, {'first-ever start' if first_ever else 'with the class archive'}"
                  f", run {i + 1}: {figures.get('seconds', figures.get('error'))} s", flush=True)
    return out


def machine() -> dict:
    """What the figures were measured on, and how loaded the machine was when the benchmark began."""
    import platform
    import subprocess
    from importlib import metadata

    try:
        java = subprocess.run(["java", "-version"], capture_output=True, text=True, timeout=30).stderr.splitlines()[0]
    except (OSError, IndexError, subprocess.TimeoutExpired) as err:
        java = f"unknown ({err})"
    return {"cores": os.cpu_count(), "python": platform.python_version(), "pyspark": metadata.version("pyspark"),
            "java": java,
            "load_at_start": [round(v, 2) for v in os.getloadavg()], "started_at": round(time.time(), 1)}
