"""The ``flinkbench`` command, with Flink's CLI verbs and flags where Flink has them.

    flinkbench jobmanager [-c conf.yaml] [-D key=value ...]
    flinkbench taskmanager -m host:port --token-file F [--slots N]
    flinkbench historyserver [-c conf.yaml] [-D key=value ...]
    flinkbench cluster start [--taskmanagers N] [--slots N] [--conf F] [-D ...] [--detach] | cluster stop
    flinkbench run [-p N] [-D key=value] [-s SAVEPOINT [-n]] [--detached] job.py [args ...]
    flinkbench list [-r] [-a] | cancel JOB | checkpoint JOB | stop [-p DIR] [--drain] JOB
    flinkbench savepoint JOB [DIR] | savepoint --dispose PATH
    flinkbench dashboard [JOB]   (a link that opens the web dashboard once, logged in)
    flinkbench users add NAME [--slots N] [--admin] [--out F] | users list | users remove NAME
    flinkbench --version

Commands that talk to a cluster find it from ``-m host:port`` (or ``--jobmanager URL``) and
``--token-file``, else FLINKBENCH_JOBMANAGER_URL and FLINKBENCH_TOKEN_FILE, else the cluster that
``flinkbench cluster start`` recorded. Errors are one line on stderr and exit code 2.
"""
from __future__ import annotations

import argparse
import importlib
import sys

from runtime.cli.commands import COMMANDS
from runtime.errors import FlinkbenchError
from runtime.version import version

JOB_ID_HELP = "the job's id (32 hex digits; 'flinkbench list' shows them)"
SAVEPOINT_DIR_HELP = "directory or URL to write it to (default: state.savepoints.dir)"


def _with_conf(sp: argparse.ArgumentParser) -> argparse.ArgumentParser:
    sp.add_argument("-D", dest="dynamic", action="append", default=[], metavar="KEY=VALUE",
                    help="set a config key (Flink's names), e.g. -D heartbeat.timeout='6 s'")
    sp.add_argument("-c", "--conf", metavar="FILE", help="YAML config file (Flink's key names)")
    return sp


def _with_target(sp: argparse.ArgumentParser) -> argparse.ArgumentParser:
    sp.add_argument("-m", "--jobmanager", metavar="HOST:PORT|URL", help="the JobManager's address (REST)")
    sp.add_argument("--token-file", metavar="FILE", help="file holding the cluster token")
    return sp


def _cluster_parsers(sub) -> None:
    jm = _with_conf(sub.add_parser("jobmanager", help="run a JobManager process in the foreground"))
    jm.add_argument("--ready-file", help=argparse.SUPPRESS)
    tm = _with_conf(sub.add_parser("taskmanager", help="run a TaskManager process in the foreground"))
    tm.add_argument("-m", "--jobmanager", metavar="HOST:PORT|URL",
                    help="the JobManager to register with (default: jobmanager.rpc.address:rest.port)")
    tm.add_argument("--jobmanager-ready-file", help=argparse.SUPPRESS)  # LocalCluster: the URL comes later, in it
    tm.add_argument("--token-file", required=True, metavar="FILE", help="file holding the cluster token")
    tm.add_argument("--slots", type=int, help="slots to offer (default: taskmanager.numberOfTaskSlots)")
    _with_conf(sub.add_parser("historyserver", help="serve the archived jobs (historyserver.archive.fs.dir) in the "
                              "foreground, with the REST API and dashboard of a JobManager"))
    cluster = sub.add_parser("cluster", help="a local cluster: a JobManager and TaskManagers on this machine")
    actions = cluster.add_subparsers(dest="action", required=True)
    start = _with_conf(actions.add_parser("start", help="start a JobManager and TaskManagers (Ctrl-C stops them)"))
    start.add_argument("--taskmanagers", type=int, default=1, metavar="N",
                       help="TaskManagers to start with (default 1, as Flink's local cluster; 0: none until a job needs them); "
                       "more are started when jobs need slots")
    start.add_argument("--slots", type=int, metavar="N",
                       help="slots per TaskManager (default: taskmanager.numberOfTaskSlots, 2)")
    start.add_argument("--detach", action="store_true", help="run it in the background; 'cluster stop' ends it")
    actions.add_parser("stop", help="stop the cluster that 'cluster start' recorded")


def _job_parsers(sub) -> None:
    run = _with_target(sub.add_parser("run", help="run a Python program that builds and executes jobs"))
    run.add_argument("-p", "--parallelism", type=int, metavar="N", help="default parallelism of the program's jobs")
    run.add_argument("-D", dest="dynamic", action="append", default=[], metavar="KEY=VALUE",
                     help="a job config key (Flink's names), below the program's own settings")
    run.add_argument("-s", "--fromSavepoint", "--from-savepoint", dest="from_savepoint", metavar="PATH",
                     help="start the program's jobs from this savepoint")
    run.add_argument("-n", "--allowNonRestoredState", dest="allow_non_restored_state", action="store_true",
                     help="with -s: drop the savepoint's state that no operator of the job claims (else refused)")
    run.add_argument("-pyfs", "--pyFiles", dest="py_files", metavar="FILES",
                     help="Python files or folders, comma-separated, on the path of the jobs' functions on every "
                          "TaskManager (python.files)")
    run.add_argument("-pyarch", "--pyArchives", dest="py_archives", metavar="ARCHIVES",
                     help="zip archives, comma-separated, each archive#target_dir, unpacked for the jobs' functions "
                          "(python.archives)")
    run.add_argument("-pyreq", "--pyRequirements", dest="py_requirements", metavar="FILE",
                     help="a requirements file (or file#cached_dir) pip installs for the jobs on every TaskManager "
                          "(python.requirements)")
    run.add_argument("-d", "--detached", action="store_true",
                     help="return once the jobs are submitted (default: wait and print each job's final state)")
    run.add_argument("file", help="the Python program (it calls env.execute() or env.execute_async())")
    run.add_argument("args", nargs=argparse.REMAINDER, help="arguments passed to the program as sys.argv[1:]")
    listing = _with_target(sub.add_parser("list", help="list jobs (running and scheduled by default)"))
    listing.add_argument("-r", "--running", action="store_true", help="only running jobs")
    listing.add_argument("-a", "--all", action="store_true", help="all jobs, including finished ones")
    cancel = _with_target(sub.add_parser("cancel", help="cancel a job"))
    cancel.add_argument("job_id", help=JOB_ID_HELP)
    savepoint = _with_target(sub.add_parser("savepoint", help="take a savepoint of a running job, or dispose of one"))
    savepoint.add_argument("job_id", nargs="?", help=JOB_ID_HELP)
    savepoint.add_argument("target", nargs="?", help=SAVEPOINT_DIR_HELP)
    savepoint.add_argument("-d", "--dispose", metavar="PATH", help="delete the savepoint at PATH instead")
    checkpoint = _with_target(sub.add_parser("checkpoint", help="take a checkpoint of a running job now"))
    checkpoint.add_argument("job_id", help=JOB_ID_HELP)
    checkpoint.add_argument("--full", action="store_true", help="a full checkpoint (every checkpoint is full here)")
    stop = _with_target(sub.add_parser("stop", help="stop a job with a savepoint (resume with run -s PATH)"))
    stop.add_argument("job_id", help=JOB_ID_HELP)
    stop.add_argument("-p", "--savepointPath", dest="target", metavar="DIR", help=SAVEPOINT_DIR_HELP)
    stop.add_argument("-d", "--drain", action="store_true",
                      help="first send a watermark of +infinity, so every event-time window fires")
    dashboard = _with_target(sub.add_parser(
        "dashboard", help="print a link that opens the web dashboard once, logged in (no token in it)"))
    dashboard.add_argument("job_id", nargs="?", help="open this job's page (default: the overview)")


def _user_parsers(sub) -> None:
    users = sub.add_parser("users", help="the cluster's users: each their own token, jobs and slot quota")
    actions = users.add_subparsers(dest="action", required=True)
    add = _with_target(actions.add_parser("add", help="add a user (prints their token once)"))
    add.add_argument("name", help="1-64 letters, digits or _.@-")
    add.add_argument("--slots", type=int, metavar="N", help="slot quota: their jobs together hold at most N slots")
    add.add_argument("--admin", action="store_true", help="sees and controls every user's jobs")
    add.add_argument("-o", "--out", dest="out_token_file", metavar="FILE",
                     help="write the token to FILE (owner-only) instead of printing it")
    _with_target(actions.add_parser("list", help="list the users and their quotas"))
    remove = _with_target(actions.add_parser("remove", help="remove a user: their token stops working"))
    remove.add_argument("name", help="the user to remove (their running jobs run on)")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="flinkbench", description="Flinkbench: a Flink-style streaming runtime on PySpark")
    p.add_argument("--version", action="version", version=f"flinkbench {version()}")
    sub = p.add_subparsers(dest="command", required=True)
    _cluster_parsers(sub)
    _job_parsers(sub)
    _user_parsers(sub)
    return p


def command(name: str):
    """The function that runs subcommand ``name``."""
    module, function = COMMANDS[name].split(".")
    return getattr(importlib.import_module(f"runtime.cli.{module}"), function)


def main(argv: list[str] | None = None) -> int:
    p = parser()
    args = p.parse_args(argv)
    if args.command == "savepoint" and bool(args.dispose) == bool(args.job_id):
        p.error("savepoint: give a JOB (and optionally a DIR), or --dispose PATH")
    try:
        return command(args.command)(args)
    except (FlinkbenchError, TimeoutError) as err:
        print(f"flinkbench: {err}", file=sys.stderr)
        return 2
