"""Where a warm TaskManager's CPU goes per bundle of the README's clicks job at its 1,000 rows/s (each of the two
source subtasks reads 1,000 rows every 2 s): in one process started as a TaskManager starts its session, warmed
up, the source task's chain and the window task's merge run bundle after bundle, and each bundle's CPU is split
into this process's Python (py4j calls, Arrow in and out, our own code), the JVM's threads (the bundle's own
thread for analysis, optimisation, planning and code generation; Spark's executor threads for its stages;
garbage collection; the rest), with Spark's own timing of the query's phases (QueryPlanningTracker).

    .venv/bin/python -m tests.benchmarks.bundle_cpu [--bundles 60] [--rows 1000] [--profile py.prof]

CPU seconds move less with the machine's load than wall seconds, but a loaded machine still slows both.
"""
from __future__ import annotations

import argparse
import cProfile
import collections
import json
import os
import statistics
import time

import psutil

from runtime.config import Configuration
from runtime.messages import OutputDescriptor
from tests.benchmarks.first_bundle import source_chains

GC_THREADS = ("GC Thread", "VM Thread", "G1 ", "Serial")  # the collector's and the VM's own threads
COMPILER_THREADS = ("C1 CompilerThre", "C2 CompilerThre")  # /proc cuts names at 15 characters


def jvm_threads(jvm_pid: int) -> dict[str, float]:
    """CPU seconds of each thread of the JVM so far, summed by kind (its name without numbers)."""
    out: collections.Counter[str] = collections.Counter()
    tick = os.sysconf("SC_CLK_TCK")
    for tid in os.listdir(f"/proc/{jvm_pid}/task"):
        try:
            with open(f"/proc/{jvm_pid}/task/{tid}/stat") as f:
                stat = f.read()
            with open(f"/proc/{jvm_pid}/task/{tid}/comm") as f:
                name = f.read().strip()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        out[_kind(name)] += (int(fields[11]) + int(fields[12])) / tick
    return dict(out)


def _kind(name: str) -> str:
    if name.startswith(COMPILER_THREADS):
        return f"jit {name[:2]}"
    if name.startswith(GC_THREADS):
        return "gc"
    if name.startswith("Executor task"):
        return "executor"
    if name.startswith("Thread-") or name == "java":
        return "driver (py4j)"
    return os.environ.get("BUNDLE_CPU_THREADS") and name.rstrip("0123456789") or "other"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundles", type=int, default=60)
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--warm", type=int, default=20, help="bundles run before measuring")
    parser.add_argument("--profile", help="write cProfile's figures of the measured bundles here")
    parser.add_argument("-D", dest="settings", action="append", default=[], help="key=value configuration")
    args = parser.parse_args()
    from runtime.connectors.base import ConnectorContext
    from runtime.connectors.registry import source_reader
    from runtime.taskmanager.chain import OperatorChain
    from runtime.taskmanager.driver_time import PHASES
    from runtime.taskmanager.spark import SparkRunner
    from runtime.taskmanager.warm_up import warm_up

    print(f"load average before: {os.getloadavg()}", flush=True)
    conf = Configuration(dict(s.split("=", 1) for s in args.settings))
    source_ops, window_ops = source_chains()["clicks"]
    runner = SparkRunner(conf, 2)
    session = runner.session
    warm_up(runner)
    jvm = psutil.Process(runner.keeper.jvm_pid())
    me = psutil.Process()
    out = OutputDescriptor(window_ops[0].id, "hash", ["user"], 2)
    chain = OperatorChain.build(source_ops, [out], 128)
    window = OperatorChain.build(window_ops, [], 128)
    params = dict(source_ops[0].params)
    context = ConnectorContext(source_ops[0].id, source_ops[0].name, 0, 2, params, runner,
                               lambda _: None, "job", "attempt", "streaming", None)
    reader = source_reader(context)
    tracker_of = _tracker(session)
    seen: list = []
    measure_driver = runner.driver_seconds
    runner.driver_seconds = lambda df: (seen.append(df), measure_driver(df))[1]  # type: ignore[method-assign]
    rows: list[dict] = []
    profile = cProfile.Profile() if args.profile else None
    for n in range(args.warm + args.bundles):
        measuring = n >= args.warm
        classes0 = vm_counts(session)
        py0, jvm0, threads0, wall0 = me.cpu_times(), jvm.cpu_times(), jvm_threads(jvm.pid), time.monotonic()
        if profile is not None and measuring:
            profile.enable()
        df, _, _ = reader.next_bundle(args.rows)
        table = chain.process(runner, df)
        if table is not None:
            window.process(runner, table)
        if profile is not None and measuring:
            profile.disable()
        py1, jvm1, threads1, wall1 = me.cpu_times(), jvm.cpu_times(), jvm_threads(jvm.pid), time.monotonic()
        if not measuring:
            continue
        classes1 = vm_counts(session)
        row = {"wall": wall1 - wall0, "python": py1.user + py1.system - py0.user - py0.system,
               "jvm": jvm1.user + jvm1.system - jvm0.user - jvm0.system}
        for kind, seconds in threads1.items():
            row[f"jvm {kind}"] = seconds - threads0.get(kind, 0.0)
        row.update({k: classes1[k] - classes0[k] for k in classes0})
        row.update(tracker_of(seen[-1] if seen else None))
        rows.append(row)
    show(rows, PHASES)
    if profile is not None:
        profile.dump_stats(args.profile)
    runner.stop()
    print(f"load average after: {os.getloadavg()}", flush=True)


def vm_counts(session) -> dict[str, float]:
    """Classes the JVM loaded and its JIT's compilation time (s) so far (its management beans)."""
    beans = session.sparkContext._jvm.java.lang.management.ManagementFactory
    return {"classes loaded": beans.getClassLoadingMXBean().getTotalLoadedClassCount(),
            "jit compile s (mx)": beans.getCompilationMXBean().getTotalCompilationTime() / 1000}


def _tracker(session):
    """A query's phases (seconds) as Spark's tracker timed them."""
    from runtime.taskmanager.driver_time import PHASES, _mapper

    mapper = _mapper(session.sparkContext)

    def read(df) -> dict:
        if df is None:
            return {}
        phases = json.loads(mapper.writeValueAsString(df._jdf.queryExecution().tracker().phases()))
        return {f"tracker {p}": (int(phases.get(p, {}).get("endTimeMs", 0)) - int(phases.get(p, {}).get("startTimeMs", 0))) / 1000
                for p in PHASES}
    return read


def show(rows: list[dict], phases) -> None:
    keys = sorted({k for r in rows for k in r}, key=lambda k: (k.startswith("tracker"), k))
    print(f"{len(rows)} bundles; per bundle, median (mean) seconds:")
    for key in keys:
        values = [r.get(key, 0.0) for r in rows]
        print(f"    {key:<22} {statistics.median(values):7.4f} ({statistics.fmean(values):7.4f})")


if __name__ == "__main__":
    main()
