"""Fault injection for teaching failover: ``%flink kill taskmanager ID`` and ``%flink kill jobmanager``.

On a cluster this kernel started, a TaskManager is killed as a process group (SIGKILL, its Spark JVM
with it), as a crash would. On any other cluster the JobManager does the killing through its REST
API, which refuses unless the cluster enables ``cluster.fault-injection.enabled``.
"""
from __future__ import annotations

from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring

from kernel_magics import api_hints
from kernel_magics.commands.subcommand import subcommand
from kernel_magics.commands.cluster import show_api_option
from kernel_magics.errors import FlinkError, translating


def resolve_taskmanager(client, given: str) -> str:
    live = [tm["id"] for tm in client.get("/taskmanagers")["taskmanagers"] if tm.get("state") != "LOST"]
    if given in live:
        return given
    matches = [t for t in live if t.startswith(given)]
    if len(matches) == 1:
        return matches[0]
    raise FlinkError(f"no live TaskManager {given!r}" if not matches else f"{given!r} matches {matches}; give more of the id")


@subcommand("kill")
@magic_arguments(name="flink kill")
@argument("what", choices=["taskmanager", "jobmanager"], help="which process to kill")
@argument("target", nargs="?", default=None,
          help="TaskManager id (or unique prefix); for jobmanager only 'leader' (the default)")
@show_api_option
@translating("cannot kill")
def kill(session, line: str):
    """Kill a TaskManager or the leading JobManager with SIGKILL, to watch the cluster recover."""
    args = parse_argstring(kill, line)
    client = session.require_client()
    if args.what == "taskmanager":
        if not args.target:
            raise FlinkError("which TaskManager? '%flink status' lists their ids")
        tm_id = resolve_taskmanager(client, args.target)
        if args.show_api:
            api_hints.show(client.url, session.token_file, "POST", f"/taskmanagers/{tm_id}/kill")
        if session.cluster is not None and session.cluster.url == client.url:
            child = session.cluster.kill_taskmanager(tm_id)
            print(f"killed TaskManager {tm_id} (pid {child.pid}) and its Spark JVM")
        else:
            reply = client.post(f"/taskmanagers/{tm_id}/kill")
            print(f"the JobManager killed TaskManager {tm_id} (pid {reply.get('pid')})")
        return
    if args.target not in (None, "leader"):
        raise FlinkError(f"'%flink kill jobmanager' kills the leader; got {args.target!r}")
    if args.show_api:
        api_hints.show(client.url, session.token_file, "POST", "/jobmanager/kill")
    if session.cluster is not None and client.url in session.cluster.urls:
        child = session.cluster.kill_jobmanager()
        print(f"killed the leading JobManager (pid {child.pid}) with SIGKILL; standbys take over if the "
              "cluster has any, and the live views reconnect")
        return
    reply = client.post("/jobmanager/kill")
    print(f"killed the leading JobManager {client.url} (pid {reply.get('pid')}); "
          "standbys take over if the cluster has any, and the live views reconnect")
