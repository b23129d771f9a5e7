"""What a fresh TaskManager JVM's first bundles cost, with and without its warm-up: in a child process of its own
per run (a fresh JVM each, started as a TaskManager starts its session), the Spark session's start, the warm-up,
then the first bundles of the README's two jobs' source tasks (clicks: datagen, watermark, filter, per-user
10 s window pre-aggregate, key groups; the SQL TUMBLE query's: datagen, watermark, window pre-aggregate) and of
their window tasks, each bundle's plan and action timed, in wall seconds and in CPU seconds of the process and
its JVM (CPU seconds move less with the machine's load than wall seconds do).

    .venv/bin/python -m tests.benchmarks.first_bundle [--runs 2] [--warm-up none,warm-up]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from contextlib import contextmanager

import psutil

from runtime.api.environment import StreamExecutionEnvironment
from runtime.chaining import chain_operators
from runtime.config import Configuration
from runtime.examples import clicks
from runtime.messages import OutputDescriptor
from runtime.sql.catalog import Catalog
from runtime.sql.executor import SqlExecutor
from runtime.sql import statements
from tests.benchmarks.first_windows import SQL

BUNDLES = 3  # each job's first few: the first pays for what the JVM has not done yet, the later ones show the rest


def tree_cpu() -> float:
    """CPU seconds (user + system) of this process and everything it started (the Spark JVM)."""
    me = psutil.Process()
    total = 0.0
    for proc in [me, *me.children(recursive=True)]:
        try:
            times = proc.cpu_times()
            total += times.user + times.system + getattr(times, "children_user", 0) + getattr(times, "children_system", 0)
        except psutil.Error:
            continue
    return total


@contextmanager
def measured(figures: dict, name: str):
    wall, cpu = time.monotonic(), tree_cpu()
    yield
    figures[name] = {"wall_s": round(time.monotonic() - wall, 3), "cpu_s": round(tree_cpu() - cpu, 3)}


def source_chains() -> dict[str, list]:
    """The operators of each job's source task and window task (as the JobMaster chains them)."""
    env = StreamExecutionEnvironment()
    env.set_parallelism(2)
    clicks.build(env, rows=None, rows_per_second=1000, realtime=True, users=50)
    chains = {"clicks": chain_operators(env.job_graph("clicks"))}
    executor = SqlExecutor(Catalog(), StreamExecutionEnvironment())
    create, query = (statements.parse_script(s)[0] for s in SQL)
    executor.execute(create)
    chains["sql"] = chain_operators(executor.job_environment([executor.plan(query)]).job_graph("sql"))
    return chains


def run_one(warm_up: str) -> dict:
    """In this process: a fresh session, the warm-up asked for, then each job's first bundles."""
    from runtime.taskmanager.spark import SparkRunner
    from runtime.taskmanager.warm_up import warm_up as warm

    figures: dict = {}
    chains = source_chains()
    runner = SparkRunner(Configuration({}), 2)
    with measured(figures, "session"):
        runner.session  # noqa: B018 - starts the JVM and its session
    if warm_up == "warm-up":
        with measured(figures, "warm_up"):
            warm(runner)
    for job, (source_ops, window_ops) in chains.items():
        run_bundles(runner, source_ops, window_ops, figures, job, BUNDLES)
    runner.stop()
    return figures


def run_bundles(runner, source_ops, window_ops, figures: dict, job: str, bundles: int) -> None:
    """``bundles`` bundles of 500 rows through the source task's chain and the window task's merge, each timed."""
    from runtime.connectors.base import ConnectorContext
    from runtime.connectors.registry import source_reader
    from runtime.taskmanager.chain import OperatorChain

    out = OutputDescriptor(window_ops[0].id, "hash", ["user"], 2)
    chain = OperatorChain.build(source_ops, [out], 128)
    window = OperatorChain.build(window_ops, [], 128)
    context = ConnectorContext(source_ops[0].id, source_ops[0].name, 0, 2, dict(source_ops[0].params), runner,
                               lambda _: None, "job", "attempt", "streaming", None)
    reader = source_reader(context)
    for n in range(bundles):
        with measured(figures, f"{job} bundle {n + 1}: plan"):
            df, _, _ = reader.next_bundle(500)
        with measured(figures, f"{job} bundle {n + 1}: action"):
            table = chain.process(runner, df)
        with measured(figures, f"{job} bundle {n + 1}: window merge"):
            window.process(runner, table)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--warm-up", default="none,warm-up",
                        help="comma-separated: none, warm-up (what a TaskManager runs before it is ready)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(run_one(args.child)), flush=True)
        return
    print(f"load average before: {os.getloadavg()}", flush=True)
    for run in range(args.runs):
        for warm_up in args.warm_up.split(","):
            out = subprocess.run([sys.executable, "-m", "tests.benchmarks.first_bundle", "--child", warm_up],
                                 capture_output=True, text=True, check=True).stdout
            figures = json.loads(out.strip().splitlines()[-1])
            print(f"run {run + 1}, warm-up {warm_up}:", flush=True)
            for name, f in figures.items():
                print(f"    {name:<32} {f['wall_s']:7.2f} s wall {f['cpu_s']:7.2f} s CPU", flush=True)
    print(f"load average after: {os.getloadavg()}", flush=True)


if __name__ == "__main__":
    main()
