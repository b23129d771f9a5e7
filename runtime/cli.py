"""The ``flinkbench`` command: run cluster processes, and submit, list and cancel jobs.

    flinkbench jobmanager [-D key=value ...]
    flinkbench taskmanager --jobmanager URL --token-file F [--slots N]
    flinkbench cluster start [--taskmanagers N] [--slots N]
    flinkbench run [-s SAVEPOINT] job.py | list | cancel JOB_ID   [--jobmanager URL --token-file F]
    flinkbench savepoint JOB_ID [DIR] | stop JOB_ID [-p DIR]

Commands that talk to a cluster find it from their flags, else FLINKBENCH_JOBMANAGER_URL and
FLINKBENCH_TOKEN_FILE, else the cluster that ``flinkbench cluster start`` last recorded.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import runpy
import signal
import sys

from runtime.client import ClusterError, RestClient
from runtime.config import Configuration, parse_dynamic_properties
from runtime.errors import FlinkbenchError
from runtime.security import read_token_file
from runtime.version import version

CURRENT_CLUSTER = os.path.join(os.path.expanduser("~"), ".flinkbench", "current-cluster.json")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="flinkbench", description="Flinkbench streaming runtime on PySpark")
    p.add_argument("--version", action="version", version=f"flinkbench {version()}")
    sub = p.add_subparsers(dest="command", required=True)

    def with_conf(sp):
        sp.add_argument("-D", dest="dynamic", action="append", default=[], metavar="KEY=VALUE",
                        help="set a config key (Flink's names), e.g. -D heartbeat.timeout='6 s'")
        sp.add_argument("--conf", help="YAML config file")
        return sp

    def with_target(sp):
        sp.add_argument("--jobmanager", help="JobManager REST URL")
        sp.add_argument("--token-file", help="file holding the cluster token")
        return sp

    jm = with_conf(sub.add_parser("jobmanager", help="run a JobManager process"))
    jm.add_argument("--ready-file", help=argparse.SUPPRESS)
    tm = with_conf(sub.add_parser("taskmanager", help="run a TaskManager process"))
    tm.add_argument("--jobmanager", required=True)
    tm.add_argument("--token-file", required=True)
    tm.add_argument("--slots", type=int)
    cluster = sub.add_parser("cluster", help="an embedded local cluster")
    csub = cluster.add_subparsers(dest="action", required=True)
    start = with_conf(csub.add_parser("start", help="start a JobManager and TaskManagers; Ctrl-C stops them"))
    start.add_argument("--taskmanagers", type=int, default=2)
    start.add_argument("--slots", type=int, default=2)
    run = with_target(sub.add_parser("run", help="run a Python file that builds and executes a job"))
    run.add_argument("file")
    run.add_argument("args", nargs=argparse.REMAINDER)
    with_target(sub.add_parser("list", help="list jobs"))
    cancel = with_target(sub.add_parser("cancel", help="cancel a job"))
    cancel.add_argument("job_id")
    savepoint = with_target(sub.add_parser("savepoint", help="take a savepoint of a running job"))
    savepoint.add_argument("job_id")
    savepoint.add_argument("target", nargs="?", help="directory or URL (default state.savepoints.dir)")
    stop = with_target(sub.add_parser("stop", help="stop a job with a savepoint (resume with run --from-savepoint)"))
    stop.add_argument("job_id")
    stop.add_argument("--savepointPath", "-p", dest="target", help="directory or URL (default state.savepoints.dir)")
    run.add_argument("--from-savepoint", "-s", dest="from_savepoint", help="start the job from this savepoint")
    return p


def _configuration(args) -> Configuration:
    return Configuration.load(getattr(args, "conf", None), parse_dynamic_properties(getattr(args, "dynamic", [])))


def _target(args) -> tuple[str, str]:
    url = args.jobmanager or os.environ.get("FLINKBENCH_JOBMANAGER_URL")
    token_file = args.token_file or os.environ.get("FLINKBENCH_TOKEN_FILE")
    if not url and os.path.exists(CURRENT_CLUSTER):
        with open(CURRENT_CLUSTER, encoding="utf-8") as fh:
            current = json.load(fh)
        url, token_file = current["url"], token_file or current["token_file"]
    if not url:
        raise ClusterError("no cluster given: pass --jobmanager URL --token-file F, or start one with "
                           "'flinkbench cluster start'")
    return url, token_file


def cmd_jobmanager(args) -> int:
    from runtime.jobmanager.jobmanager import serve

    _logging()
    asyncio.run(serve(_configuration(args), args.ready_file))
    return 0


def cmd_taskmanager(args) -> int:
    from runtime.taskmanager.task_manager import serve

    _logging()
    conf = _configuration(args)
    asyncio.run(serve(conf, args.jobmanager, read_token_file(args.token_file), args.slots))
    return 0


def cmd_cluster(args) -> int:
    from runtime.cluster import LocalCluster

    conf = parse_dynamic_properties(args.dynamic)
    _configuration(args)  # validate before starting anything
    with LocalCluster(args.taskmanagers, args.slots, conf) as cluster:
        os.makedirs(os.path.dirname(CURRENT_CLUSTER), exist_ok=True)
        with open(CURRENT_CLUSTER, "w", encoding="utf-8") as fh:
            json.dump({"url": cluster.url, "token_file": cluster.token_file}, fh)
        print(f"cluster running: JobManager {cluster.url}, {args.taskmanagers} TaskManagers x {args.slots} slots")
        print(f"token file: {cluster.token_file}\nlogs: {cluster.working_dir}\nCtrl-C stops it.", flush=True)
        try:
            signal.sigwait({signal.SIGINT, signal.SIGTERM})
        except KeyboardInterrupt:
            pass
    if os.path.exists(CURRENT_CLUSTER):
        os.remove(CURRENT_CLUSTER)
    return 0


def cmd_run(args) -> int:
    url, token_file = _target(args)
    os.environ["FLINKBENCH_JOBMANAGER_URL"] = url
    if token_file:
        os.environ["FLINKBENCH_TOKEN_FILE"] = token_file
    if args.from_savepoint:
        os.environ["FLINKBENCH_FROM_SAVEPOINT"] = args.from_savepoint
    sys.argv = [args.file, *args.args]
    runpy.run_path(args.file, run_name="__main__")
    return 0


def cmd_list(args) -> int:
    url, token_file = _target(args)
    jobs = RestClient(url, token_file=token_file).jobs()
    if not jobs:
        print("no jobs")
    for job in jobs:
        print(f"{job['jid']}  {job['state']:<11} {job['name']}")
    return 0


def cmd_cancel(args) -> int:
    url, token_file = _target(args)
    RestClient(url, token_file=token_file).job(args.job_id).cancel()
    print(f"cancelling {args.job_id}")
    return 0


def cmd_savepoint(args) -> int:
    url, token_file = _target(args)
    location = RestClient(url, token_file=token_file).job(args.job_id).savepoint(args.target,
                                                                                  stop=args.command == "stop")
    print(f"savepoint of {args.job_id} completed: {location}")
    return 0


def _logging() -> None:
    logging.basicConfig(level=os.environ.get("FLINKBENCH_LOG_LEVEL", "INFO"),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("tornado.access").setLevel(logging.WARNING)
    logging.getLogger("py4j").setLevel(logging.WARNING)


COMMANDS = {"jobmanager": cmd_jobmanager, "taskmanager": cmd_taskmanager, "cluster": cmd_cluster,
            "run": cmd_run, "list": cmd_list, "cancel": cmd_cancel, "savepoint": cmd_savepoint,
            "stop": cmd_savepoint}


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except (FlinkbenchError, TimeoutError) as err:
        print(f"flinkbench: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
