"""``make chaos``: the long chaos run, with file HA and then with ZooKeeper HA; exits 1 if any check fails.

    python -m tests.chaos [--ha file zookeeper] [--duration 300] [--seed 1] [--dir DIR]
"""
from __future__ import annotations

import argparse
import sys
import tempfile

from tests.chaos.report import render
from tests.chaos.run import RunSpec, run
from tests.chaos.schedule import ScheduleSpec


def long_schedule(ha: str, duration: float) -> ScheduleSpec:
    """Every major fault kind once per 100 s of faults (at least once), each in a slot of its own."""
    each = max(1, int(duration // 100))
    return ScheduleSpec(duration=duration, leader_kills=each, leader_pauses=each, storage_outages=each,
                        zookeeper_restarts=each if ha == "zookeeper" else 0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.chaos", description=__doc__.splitlines()[0])
    parser.add_argument("--ha", nargs="+", choices=("file", "zookeeper"), default=["file", "zookeeper"])
    parser.add_argument("--duration", type=float, default=300.0, help="seconds of faults per run")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--dir", default=None, help="working directory (default: a new temporary one)")
    args = parser.parse_args(argv)
    base = args.dir or tempfile.mkdtemp(prefix="flinkbench-chaos-")
    print(f"chaos: working directory {base} (cluster logs, checkpoints, output)", flush=True)
    passed = True
    for ha in args.ha:
        spec = RunSpec(ha, long_schedule(ha, args.duration), args.seed, f"{base}/{ha}", warmup_s=40.0,
                       settle=True)
        report = run(spec, log=lambda line: print(line, flush=True))
        print("\n".join(render(report)), flush=True)
        passed &= report.ok
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
