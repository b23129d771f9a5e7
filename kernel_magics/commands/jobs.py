"""Job subcommands: jobs, cancel, savepoint, stop-job, attach.

Savepoints and stop-with-savepoint follow Flink's REST API: ``POST /jobs/<id>/savepoints`` or
``POST /jobs/<id>/stop`` answer a request id, and ``GET /jobs/<id>/savepoints/<request id>``
reports ``IN_PROGRESS`` until the operation has a ``location`` or a ``failure-cause``.
"""
from __future__ import annotations

import time

from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring

from kernel_magics import api_hints
from kernel_magics.commands.subcommand import subcommand
from kernel_magics.commands.cluster import show_api_option
from kernel_magics.errors import FlinkError, translating
from runtime.client import TERMINAL_STATES, ClusterError

CANCEL_WAIT_S = 30.0
SAVEPOINT_WAIT_S = 300.0


def resolve_job(client, given: str) -> str:
    """A job id from a full id or a unique prefix of one (ids are long to type)."""
    ids = [j["jid"] for j in client.jobs()]
    if given in ids:
        return given
    matches = [j for j in ids if j.startswith(given)]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise FlinkError(f"no job {given!r} on {client.url}: '%flink jobs' lists them")
    raise FlinkError(f"{given!r} matches {len(matches)} jobs; give more of the id")


def wait_terminal(client, job_id: str, timeout: float) -> str:
    """Poll the job's state until it is terminal or ``timeout`` passes; returns the last state."""
    deadline = time.monotonic() + timeout
    state = client.get(f"/jobs/{job_id}")["state"]
    while state not in TERMINAL_STATES and time.monotonic() < deadline:
        time.sleep(0.2)
        state = client.get(f"/jobs/{job_id}")["state"]
    return state


@subcommand("jobs")
@magic_arguments(name="flink jobs")
@argument("--running", action="store_true", help="only jobs that have not ended")
@show_api_option
@translating("cannot list jobs")
def jobs(session, line: str):
    """Jobs on the cluster, running ones first (also those started before a kernel restart)."""
    import pandas as pd

    args = parse_argstring(jobs, line)
    client = session.require_client()
    rows = []
    for j in client.jobs():
        if args.running and j["state"] in TERMINAL_STATES:
            continue
        rows.append({"id": j["jid"], "name": j["name"], "state": j["state"],
                     "started": pd.to_datetime(j["start-time"], unit="ms") if j.get("start-time", -1) > 0 else None,
                     "duration s": round(j.get("duration", 0) / 1000.0, 1), "parallelism": j.get("parallelism"),
                     "restarts": j.get("restarts", 0)})
    rows.sort(key=lambda r: (r["state"] in TERMINAL_STATES, -(r["started"].timestamp() if r["started"] else 0)))
    if args.show_api:
        api_hints.show(client.url, session.token_file, "GET", "/jobs/overview", cli="list")
    if not rows:
        print("no jobs" + (" running" if args.running else ""))
        return None
    return pd.DataFrame(rows)


@subcommand("cancel")
@magic_arguments(name="flink cancel")
@argument("job", help="job id (or a unique prefix)")
@show_api_option
@translating("cannot cancel")
def cancel(session, line: str):
    """Cancel a job and wait (up to 30 s) until it is CANCELED."""
    args = parse_argstring(cancel, line)
    client = session.require_client()
    job_id = resolve_job(client, args.job)
    if args.show_api:
        api_hints.show(client.url, session.token_file, "PATCH", f"/jobs/{job_id}?mode=cancel", cli=f"cancel {job_id}")
    client.job(job_id).cancel()
    print(f"job {job_id}: {wait_terminal(client, job_id, CANCEL_WAIT_S)}")
    session.settle_view(job_id)


@subcommand("savepoint")
@magic_arguments(name="flink savepoint")
@argument("job", help="job id (or a unique prefix)")
@argument("--target", metavar="DIR", help="where to write it (default: state.savepoints.dir)")
@show_api_option
@translating("savepoint failed")
def savepoint(session, line: str):
    """Trigger a savepoint of a running job; returns its location (for --from-savepoint)."""
    args = parse_argstring(savepoint, line)
    client = session.require_client()
    job_id = resolve_job(client, args.job)
    body = {"target-directory": args.target, "cancel-job": False}
    return _savepoint_operation(session, client, job_id, f"/jobs/{job_id}/savepoints", body,
                                f"savepoint {job_id}" + (f" {args.target}" if args.target else ""), args.show_api)


@subcommand("stop-job")
@magic_arguments(name="flink stop-job")
@argument("job", help="job id (or a unique prefix)")
@argument("--savepoint", nargs="?", const="", default=None, metavar="DIR",
          help="take a savepoint (into DIR, else state.savepoints.dir) and then stop the job")
@argument("--drain", action="store_true", help="end the sources first, so windows fire (Flink's --drain)")
@show_api_option
@translating("stop with savepoint failed")
def stop_job(session, line: str):
    """Stop a job gracefully with a final savepoint (Flink's 'stop'); returns the savepoint's location."""
    args = parse_argstring(stop_job, line)
    if args.savepoint is None:
        raise FlinkError("stop-job takes a savepoint before stopping: add --savepoint [DIR] "
                         "(or use '%flink cancel' to end the job without one)")
    client = session.require_client()
    job_id = resolve_job(client, args.job)
    body = {"targetDirectory": args.savepoint or None, "drain": args.drain}
    cli = f"stop {job_id}" + (f" --savepointPath {args.savepoint}" if args.savepoint else "")
    location = _savepoint_operation(session, client, job_id, f"/jobs/{job_id}/stop", body, cli, args.show_api)
    print(f"job {job_id}: {wait_terminal(client, job_id, CANCEL_WAIT_S)}")
    session.settle_view(job_id)
    return location


def _savepoint_operation(session, client, job_id: str, path: str, body: dict, cli: str, show_api: bool) -> str:
    """POST the trigger, then poll its status until the savepoint has a location, which it returns."""
    if show_api:
        api_hints.show(client.url, session.token_file, "POST", path, body, cli=cli)
    try:
        reply = client.post(path, body)
    except ClusterError as err:
        if err.status in (404, 405) and str(err).startswith("HTTP "):
            raise FlinkError(f"the JobManager at {client.url} has no 'POST {path.replace(job_id, '<id>')}' route "
                             f"({err}): this cluster cannot take savepoints yet") from None
        raise
    request_id = reply.get("request-id") or reply.get("triggerid")
    if not request_id:
        raise FlinkError(f"the JobManager accepted 'POST {path}' but returned no request id: {reply}")
    print(f"savepoint of job {job_id} triggered (request {request_id}) ...", flush=True)
    deadline = time.monotonic() + SAVEPOINT_WAIT_S
    while time.monotonic() < deadline:
        status = client.get(f"/jobs/{job_id}/savepoints/{request_id}")
        if (status.get("status") or {}).get("id") == "COMPLETED":
            operation = status.get("operation") or {}
            if operation.get("location"):
                return operation["location"]
            cause = operation.get("failure-cause") or {}
            raise FlinkError(f"savepoint of job {job_id} failed: "
                             f"{cause.get('stack-trace') or cause.get('class') or operation}")
        time.sleep(0.3)
    raise FlinkError(f"savepoint of job {job_id} not complete after {SAVEPOINT_WAIT_S:g} s (request {request_id})")


@subcommand("attach")
@magic_arguments(name="flink attach")
@argument("job", help="job id (or a unique prefix)")
@argument("--max-rows", type=int, default=100, metavar="N", help="rows the live table keeps (default 100)")
@argument("-o", dest="output", metavar="VAR", help="also keep every collected row in this pandas DataFrame")
@translating("cannot attach")
def attach(session, line: str):
    """Bring back a job's live view and results (e.g. after a kernel restart)."""
    from kernel_magics.widgets.job_view import JobView

    args = parse_argstring(attach, line)
    client = session.require_client()
    job_id = resolve_job(client, args.job)
    details = session.seed_job(job_id)
    total = client.get(f"/jobs/{job_id}/results?offset=0&limit=0").get("total", 0)
    start = 0 if args.output else max(0, total - args.max_rows)
    old = session.views_of(job_id)
    if old is not None:
        old.stop()
    view = JobView(session, client.job(job_id), details.get("name", job_id), args.max_rows, args.output, start)
    session.show_job(view)
    return view
