"""Cluster subcommands: local, connect, disconnect, stop, status, config."""
from __future__ import annotations

import inspect
import os

from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring

from kernel_magics import api_hints
from kernel_magics.commands.subcommand import subcommand
from kernel_magics.errors import FlinkError, translating
from kernel_magics.table_env import bind_table_env
from runtime.config import parse_dynamic_properties, read_yaml

PROVIDER_LINES = 8  # recent resource-provider decisions %flink status prints
# The local provider starts TaskManagers when a job needs more slots and stops idle ones it started.
LOCAL_DEFAULTS = {"cluster.fault-injection.enabled": "true", "resourcemanager.provider": "local"}


def show_api_option(fn):
    return argument("--show-api", action="store_true", help="also print the equivalent REST call and CLI command")(fn)


@subcommand("local")
@magic_arguments(name="flink local")
@argument("--taskmanagers", type=int, default=1, metavar="N",
          help="TaskManagers to start with (default 1, as Flink's local cluster; 0: none until a job needs them); "
          "more are started when jobs need slots")
@argument("--slots", type=int, default=2, metavar="N", help="slots per TaskManager (default 2)")
@argument("--jobmanagers", type=int, default=1, metavar="N", help="JobManagers (more than one needs HA support)")
@argument("--conf", metavar="FILE", help="YAML file of config keys (Flink's names)")
@argument("-D", dest="dynamic", action="append", default=[], metavar="KEY=VALUE", help="set one config key")
@show_api_option
@translating("cannot start a local cluster")
def local(session, line: str):
    """Start a cluster (JobManager and TaskManagers) for this kernel and connect to it.

    It stops when the kernel shuts down, or with '%flink stop'. Fault injection is enabled on it.
    """
    args = parse_argstring(local, line)
    if args.taskmanagers < 0 or args.slots < 1 or args.jobmanagers < 1:
        raise FlinkError("--taskmanagers must be >= 0, --slots and --jobmanagers >= 1")
    config = {**LOCAL_DEFAULTS, **(read_yaml(args.conf) if args.conf else {}), **parse_dynamic_properties(args.dynamic)}
    from runtime.cluster import LocalCluster

    kwargs = {}
    if args.jobmanagers > 1:
        if "jobmanagers" not in inspect.signature(LocalCluster).parameters:
            raise FlinkError("this runtime's LocalCluster starts one JobManager; several need high availability, "
                             "which it does not offer yet")
        kwargs["jobmanagers"] = args.jobmanagers
    cluster = session.start_local(args.taskmanagers, args.slots, config, **kwargs)
    bind_table_env(session)
    print(f"local cluster running: JobManager {cluster.url}, {args.taskmanagers} TaskManagers x {args.slots} slots")
    print(f"token file {cluster.token_file}; logs in {cluster.working_dir}")
    print(f"web dashboard: {session.dashboard_link()}")
    if args.show_api:
        print(api_hints.cli_line(cluster.url, cluster.token_file,
                                 f"cluster start --taskmanagers {args.taskmanagers} --slots {args.slots}"))


@subcommand("connect")
@magic_arguments(name="flink connect")
@argument("url", nargs="?", help="a JobManager's REST URL, e.g. http://127.0.0.1:8081 (optional with --zookeeper)")
@argument("--token", help="the cluster token itself")
@argument("--token-file", metavar="FILE", help="file holding the cluster token")
@argument("--zookeeper", metavar="QUORUM", help="find the leader through ZooKeeper HA, e.g. zk1:2181,zk2:2181")
@argument("--cluster-id", metavar="ID", help="high-availability.cluster-id of the cluster (default 'default')")
@argument("--zookeeper-root", metavar="PATH", help="high-availability.zookeeper.path.root (default /flinkbench)")
@argument("--trust-cert", metavar="FILE", help="PEM CA certificate(s) an https JobManager is verified against "
                                               "(default: $FLINKBENCH_SECURITY_SSL_REST_TRUST_CERT, else the system's)")
@show_api_option
@translating("cannot connect")
def connect(session, line: str):
    """Connect to a running cluster and follow its leader: at a JobManager's URL, or through its ZooKeeper
    quorum. Either way the leader is found again through the HA services when the JobManager used dies.
    With no arguments: the cluster the environment names (FLINKBENCH_JOBMANAGER_URL with
    FLINKBENCH_TOKEN_FILE or FLINKBENCH_TOKEN), as a JupyterHub in front of a class sets it."""
    args = parse_argstring(connect, line)
    if not line.strip():
        args.url, args.token, args.token_file = from_environment()
    if args.token and args.token_file:
        raise FlinkError("give --token or --token-file, not both")
    if not args.token and not args.token_file:
        raise FlinkError("the cluster needs its token: pass --token-file FILE (the JobManager prints where it is) "
                         "or --token TOKEN")
    if not args.url and not args.zookeeper:
        raise FlinkError("name the cluster: a JobManager URL, or --zookeeper QUORUM")
    if (args.cluster_id or args.zookeeper_root) and not args.zookeeper:
        raise FlinkError("--cluster-id and --zookeeper-root go with --zookeeper")
    if session.cluster is not None:
        raise FlinkError(f"this kernel runs a local cluster at {session.cluster.url}; '%flink stop' it first")
    overview = session.connect(args.url, args.token, args.token_file, ha=zookeeper_settings(args),
                               trust_cert=args.trust_cert)
    bind_table_env(session)
    print(f"connected to {session.url}: {overview.get('taskmanagers', 0)} TaskManagers, "
          f"{overview.get('slots-available', 0)}/{overview.get('slots-total', 0)} slots free, "
          f"{overview.get('jobs-running', 0)} jobs running")
    if args.show_api:
        api_hints.show(session.url, args.token_file, "GET", "/overview", cli="list")


def from_environment() -> tuple[str, str | None, str | None]:
    """The cluster, token and token file the environment names; FlinkError saying what to set without one."""
    url = os.environ.get("FLINKBENCH_JOBMANAGER_URL")
    if not url:
        raise FlinkError("no cluster named: give '%flink connect URL --token-file FILE', or set "
                         "FLINKBENCH_JOBMANAGER_URL and FLINKBENCH_TOKEN_FILE (a class's JupyterHub sets them)")
    token_file = os.environ.get("FLINKBENCH_TOKEN_FILE")
    return url.split(",")[0].strip(), None if token_file else os.environ.get("FLINKBENCH_TOKEN"), token_file


def zookeeper_settings(args) -> dict[str, str] | None:
    """The HA keys ``%flink connect --zookeeper`` stands for (Flink's names), or None without it."""
    if not args.zookeeper:
        return None
    settings = {"high-availability.type": "zookeeper", "high-availability.zookeeper.quorum": args.zookeeper}
    if args.cluster_id:
        settings["high-availability.cluster-id"] = args.cluster_id
    if args.zookeeper_root:
        settings["high-availability.zookeeper.path.root"] = args.zookeeper_root
    return settings


@subcommand("disconnect")
@magic_arguments(name="flink disconnect")
def disconnect(session, line: str):
    """Stop following the cluster; jobs (and a local cluster) keep running."""
    parse_argstring(disconnect, line)
    url = session.url
    if url is None:
        raise FlinkError("not connected")
    session.disconnect()
    tail = " (the local cluster keeps running: '%flink stop' ends it)" if session.cluster else ""
    print(f"disconnected from {url}{tail}")


@subcommand("stop")
@magic_arguments(name="flink stop")
def stop(session, line: str):
    """Stop the local cluster this kernel started (its jobs end with it)."""
    parse_argstring(stop, line)
    cluster = session.cluster
    url = session.stop_local()
    kept = getattr(cluster, "kept", None)  # its folder goes with it, unless a process failed or savepoints are in it
    print(f"stopped the local cluster at {url}" + (f"; {kept}" if kept else ""))


@subcommand("status")
@magic_arguments(name="flink status")
@show_api_option
@translating("cannot get the cluster status")
def status(session, line: str):
    """The connection, JobManagers, TaskManagers with their slots, jobs, and the resource provider's recent decisions."""
    args = parse_argstring(status, line)
    client = session.require_client()
    conn = session.model.connection
    print(f"connection: {conn['state']} - {conn['message']}")
    overview = client.overview()
    for jm in overview.get("jobmanagers", []):
        print(f"JobManager {jm.get('url')} {jm.get('role', '')} pid {jm.get('pid', '?')}")
    print(f"slots: {overview.get('slots-available')}/{overview.get('slots-total')} free; jobs: "
          f"{overview.get('jobs-running')} running, {overview.get('jobs-finished')} finished, "
          f"{overview.get('jobs-cancelled')} cancelled, {overview.get('jobs-failed')} failed")
    for tm in client.get("/taskmanagers")["taskmanagers"]:
        if tm.get("state") == "LOST":
            print(f"TaskManager {tm['id']} LOST: {tm.get('reason', '')}")
            continue
        cells = [(s.get("job-name") or s["job-id"][:8]) if s.get("job-id") else "free" for s in tm.get("slots", [])]
        print(f"TaskManager {tm['id']} pid {tm.get('pid')} slots {tm.get('freeSlots')}/{tm.get('slotsNumber')} free: "
              f"[{' | '.join(cells)}]")
    with session.model.lock:  # what the resource provider did lately, as the event stream told
        decisions = list(session.model.provider_decisions)[-PROVIDER_LINES:]
    for d in decisions:
        print(f"resource provider: {d['decision']} {d.get('tm_id') or ''}: {d.get('reason') or ''}")
    if args.show_api:
        api_hints.show(client.url, session.token_file, "GET", "/overview")
        api_hints.show(client.url, session.token_file, "GET", "/taskmanagers")


@subcommand("config")
@magic_arguments(name="flink config")
@argument("filter", nargs="?", default="", help="show only keys containing this text")
@show_api_option
@translating("cannot read the cluster configuration")
def config(session, line: str):
    """The cluster's configuration (every key in force) as a table."""
    import pandas as pd

    args = parse_argstring(config, line)
    client = session.require_client()
    entries = [e for e in client.get("/jobmanager/config") if args.filter in e["key"]]
    if args.show_api:
        api_hints.show(client.url, session.token_file, "GET", "/jobmanager/config")
    return pd.DataFrame(entries, columns=["key", "value"])
