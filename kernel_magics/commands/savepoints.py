"""``%flink savepoints``: the savepoint browser in a notebook.

    %flink savepoints [--dir DIR]              every savepoint and retained checkpoint, newest first
    %flink savepoints show PATH                one of them: each operator's state, rows and keys
    %flink savepoints check PATH --job JOB     how it fits a running or archived job's graph
    %flink savepoints resume PATH [--allow-non-restored-state]   the job that took it, again from it
    %flink savepoints dispose PATH             delete it

``%%flink --from-savepoint PATH --check-savepoint`` checks it against the cell's own job without
submitting it. Everything goes through the JobManager's savepoint routes (``/savepoints`` ...), so the
notebook, the side panel and the dashboard show the same.
"""
from __future__ import annotations

import html
from urllib.parse import quote

from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring

from kernel_magics import api_hints
from kernel_magics.commands.subcommand import subcommand
from kernel_magics.commands.cluster import show_api_option
from kernel_magics.commands.jobs import resolve_job
from kernel_magics.errors import FlinkError, translating
from runtime.views import text

ACTIONS = ("list", "show", "check", "resume", "dispose")


def _table(headers: list[str], rows: list[list[str]], css: str) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f'<table class="{css}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


class SavepointList:
    """The list as an HTML table in the notebook (and ``.savepoints``, the JobManager's answer)."""

    def __init__(self, answer: dict):
        self.savepoints, self.directories = answer["savepoints"], answer["directories"]

    def _repr_html_(self) -> str:
        rows = [[f"<code>{html.escape(s['path'])}</code>", s["kind"], str(s["id"]),
                 html.escape(s.get("job-name") or s["job-id"][:8]), text.clock(s["timestamp"] / 1000), str(s["parallelism"]),
                 text.size(s["size"]), ", ".join(html.escape(o["operator"]) for o in s["state"])] for s in self.savepoints]
        where = ", ".join(html.escape(d) for d in self.directories)
        if not rows:
            return f"<p class='flinkbench-savepoints'>no savepoints or retained checkpoints under {where}</p>"
        return (_table(["path", "kind", "id", "job", "taken", "parallelism", "size", "state of"], rows,
                       "flinkbench-savepoints") + f"<p>under {where}</p>")


class SavepointDetails:
    def __init__(self, entry: dict):
        self.entry = entry

    def _repr_html_(self) -> str:
        s = self.entry
        head = (f"<p><b>{html.escape(s['kind'])} {s['id']}</b> of {html.escape(s.get('job-name') or s['job-id'])}, "
                f"taken {text.clock(s['timestamp'] / 1000)}, parallelism {s['parallelism']}, max parallelism "
                f"{s.get('maxParallelism')}, {text.size(s['size'])}</p>")
        rows = [[html.escape(o["operator"]), html.escape(", ".join(o["kinds"])), str(o["subtasks"]), text.size(o["bytes"]),
                 str(o.get("rows", "-")), str(o.get("keys", "-"))] for o in s["state"]]
        return head + _table(["operator", "state", "subtasks", "bytes", "rows", "keys"], rows, "flinkbench-savepoint")


class SavepointFit:
    """A compatibility report: restored, dropped, new and rescaled operators, and why it would be refused."""

    def __init__(self, answer: dict):
        self.answer = answer

    @property
    def compatible(self) -> bool:
        return self.answer["compatible"]

    def _repr_html_(self) -> str:
        a = self.answer
        verdict = ("fits: the job can start from it" if a["compatible"] else "refused as submitted")
        rows = [["restored", ", ".join(a["matched"]) or "-"], ["dropped (needs --allowNonRestoredState)",
                                                               ", ".join(a["dropped"]) or "-"],
                ["start empty", ", ".join(a["new"]) or "-"],
                ["rescaled", ", ".join(f"{r['operator']} {r['from']} -> {r['to']}" for r in a["rescaled"]) or "-"]]
        problems = "".join(f"<li>{html.escape(p)}</li>" for p in a["problems"])
        return (f"<p class='flinkbench-savepoint-fit'><b>{html.escape(a['path'])}</b>: {verdict}</p>"
                + _table(["", "operators"], [[html.escape(k), html.escape(v)] for k, v in rows], "flinkbench-fit")
                + (f"<ul>{problems}</ul>" if problems else ""))


def check_graph(client, path: str, job_graph: dict, allow: bool) -> SavepointFit:
    return SavepointFit(client.post("/savepoints/compatibility", {"path": path, "job_graph": job_graph,
                                                                  "allowNonRestoredState": allow}))


@subcommand("savepoints")
@magic_arguments(name="flink savepoints")
@argument("action", nargs="?", default="list", choices=ACTIONS, help="list (default), show, check, resume, dispose")
@argument("path", nargs="?", help="a savepoint's or retained checkpoint's directory (show, check, resume, dispose)")
@argument("--dir", action="append", default=[], metavar="DIR", help="list: another directory to look in")
@argument("--job", metavar="JOB", help="check: against this job's graph (running or archived; id or prefix)")
@argument("--allow-non-restored-state", action="store_true",
          help="check, resume: its state that no operator claims may be dropped (Flink's --allowNonRestoredState)")
@show_api_option
@translating("savepoint browser")
def savepoints(session, line: str):
    """Savepoints and retained checkpoints across jobs: list, show one's state and keys, check it against a job,
    resume its job from it or dispose of it."""
    args = parse_argstring(savepoints, line)
    if args.action != "list" and not args.path:
        raise FlinkError(f"%flink savepoints {args.action} needs the savepoint's PATH ('%flink savepoints' lists them)")
    client = session.require_client()
    method, path, body, cli = _call(client, args)
    if args.show_api:
        api_hints.show(client.url, session.token_file, method, path, body, cli=cli)
    if args.action == "dispose":
        client.dispose_savepoint(args.path)
        print(f"disposed of {args.path}")
        return None
    answer = client.post(path, body) if method == "POST" else client.get(path)
    if args.action == "resume":
        print(f"job {answer['jobid']} started from {args.path}")
        return client.job(answer["jobid"])
    return {"list": SavepointList, "show": SavepointDetails, "check": SavepointFit}[args.action](answer)


def _call(client, args) -> tuple[str, str, dict | None, str | None]:
    """The REST call (method, path, body) and the flinkbench command for ``args``."""
    allow = args.allow_non_restored_state
    if args.action == "list":
        return "GET", "/savepoints" + (f"?dir={quote(','.join(args.dir))}" if args.dir else ""), None, None
    if args.action == "show":
        return "GET", f"/savepoints/details?path={quote(args.path)}", None, None
    if args.action == "check":
        if not args.job:
            raise FlinkError("check needs --job JOB (or check a cell's job: %%flink --from-savepoint PATH "
                             "--check-savepoint)")
        body = {"path": args.path, "job_id": resolve_job(client, args.job), "allowNonRestoredState": allow}
        return "POST", "/savepoints/compatibility", body, None
    if args.action == "resume":
        return ("POST", "/savepoints/resume", {"path": args.path, "allowNonRestoredState": allow},
                f"run -s {args.path}" + (" --allowNonRestoredState" if allow else "") + " job.py")
    return "POST", "/savepoint-disposal", {"savepoint-path": args.path}, f"savepoint --dispose {args.path}"
