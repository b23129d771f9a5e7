"""``make chaos``: the long gray-failure chaos run, with file HA and then with ZooKeeper HA; exits 1 if any
check fails (output exact, job FINISHED, no storage operation by a fenced-out process).

    python -m tests.chaos [--ha file zookeeper] [--duration 300] [--seed 1 2 3] [--dir DIR]
"""
from __future__ import annotations

import argparse
import sys
import tempfile

from tests.chaos.report import render
from tests.chaos.run import RunSpec, run
from tests.chaos.schedule import ScheduleSpec


def long_schedule(ha: str, duration: float) -> ScheduleSpec:
    """Every major fault kind once per 150 s of faults (at least once), each in a slot of its own: leader
    kills, leader pauses of 8-15 s inside a checkpoint, storage outages, ZooKeeper restarts, TaskManager
    pauses past the heartbeat timeout; TaskManager kills between them, timed to checkpoints' phases too."""
    each = max(1, int(duration // 150))
    return ScheduleSpec(duration=duration, leader_kills=each, leader_pauses=each, storage_outages=each,
                        zookeeper_restarts=each if ha == "zookeeper" else 0, taskmanager_pauses=each,
                        timed_kills=True, pause_range=(8.0, 15.0))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.chaos", description=__doc__.splitlines()[0])
    parser.add_argument("--ha", nargs="+", choices=("file", "zookeeper"), default=["file", "zookeeper"])
    parser.add_argument("--duration", type=float, default=300.0, help="seconds of faults per run")
    parser.add_argument("--seed", type=int, nargs="+", default=[1], help="one run per seed and HA type")
    parser.add_argument("--dir", default=None, help="working directory (default: a new temporary one)")
    args = parser.parse_args(argv)
    base = args.dir or tempfile.mkdtemp(prefix="flinkbench-chaos-")
    print(f"chaos: working directory {base} (cluster logs, checkpoints, storage traces, output)", flush=True)
    passed = True
    for ha in args.ha:
        for seed in args.seed:
            spec = RunSpec(ha, long_schedule(ha, args.duration), seed, f"{base}/{ha}-seed{seed}", warmup_s=40.0,
                           settle=True, trace=True)
            report = run(spec, log=lambda line: print(line, flush=True))
            print("\n".join(render(report)), flush=True)
            passed &= report.ok
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
