"""Small HTML pieces the dashboard's pages are made of: links between pages, tables, key/value lists.

Every value is escaped here, so page code never builds HTML from raw strings. Pages are addressed by
query arguments of ``/dashboard``, which makes each of them a link that can be shared or reloaded.
"""
from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from urllib.parse import urlencode

PATH = "/dashboard"
STYLE = """<style>
.fb-table{border-collapse:collapse;font-size:12px;margin:4px 0 10px 0}
.fb-table th,.fb-table td{border-bottom:1px solid #e4e4e4;padding:3px 10px 3px 0;text-align:left;vertical-align:top}
.fb-table th{color:#555;font-weight:600}
.fb-kv td:first-child{color:#666;padding-right:16px}
.fb-state{font-weight:bold}
.fb-nav a{margin-right:14px;font-size:14px}
.fb-nav .fb-here{font-weight:bold;text-decoration:none;color:#000}
.fb-muted{color:#777}
.fb-error{color:#c00}
pre.fb-trace{font-size:11px;background:#f7f7f7;padding:6px;max-height:300px;overflow:auto;white-space:pre-wrap}
pre.fb-log{font-size:11px;background:#f7f7f7;padding:6px;max-height:360px;overflow:auto}
</style>"""
STATE_COLORS = {"RUNNING": "#2ca02c", "FINISHED": "#1f77b4", "CANCELED": "#ff7f0e", "CANCELLING": "#ff7f0e",
                "FAILED": "#d62728", "FAILING": "#d62728", "RESTARTING": "#ff7f0e", "CREATED": "#888",
                "INITIALIZING": "#888", "COMPLETED": "#2ca02c", "IN_PROGRESS": "#1f77b4", "REGISTERED": "#2ca02c",
                "LOST": "#d62728", "leader": "#2ca02c", "standby": "#1f77b4", "suspended": "#ff7f0e"}


def esc(value) -> str:
    return html.escape("" if value is None else str(value))


def href(**query: str) -> str:
    """The dashboard page for ``query`` (``job=<id>``, ``taskmanager=<id>``, ``page=jobs`` ...)."""
    args = {k: v for k, v in query.items() if v}
    return PATH + ("?" + urlencode(args) if args else "")


def link(text, **query: str) -> str:
    return f"<a href='{esc(href(**query))}'>{esc(text)}</a>"


def state(value) -> str:
    color = STATE_COLORS.get(str(value), "#444")
    return f"<span class='fb-state' data-state='{esc(value)}' style='color:{color}'>{esc(value)}</span>"


def table(headers: Sequence[str], rows: Iterable[Sequence[str]], name: str = "") -> str:
    """Cells are HTML already (made with :func:`esc`, :func:`link`, :func:`state`)."""
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows)
    if not body:
        body = f"<tr><td colspan='{len(headers)}' class='fb-muted'>none</td></tr>"
    return f"<table class='fb-table' data-name='{esc(name)}'><tr>{head}</tr>{body}</table>"


def key_values(pairs: Iterable[tuple[str, str]], name: str = "") -> str:
    """A two-column table; values are HTML already."""
    rows = "".join(f"<tr><td>{esc(k)}</td><td>{v}</td></tr>" for k, v in pairs)
    return f"<table class='fb-table fb-kv' data-name='{esc(name)}'>{rows}</table>"


def nav(here: str, title: str) -> str:
    """The bar on top of every page; ``here`` is the current section (overview, jobs, taskmanagers, jobmanager,
    savepoints; users: an admin's view of every user's jobs)."""
    items = [("overview", "Overview", {}), ("jobs", "Jobs", {"page": "jobs"}),
             ("taskmanagers", "TaskManagers", {"page": "taskmanagers"}),
             ("jobmanager", "JobManager", {"page": "jobmanager"}), ("savepoints", "Savepoints", {"page": "savepoints"}),
             ("users", "Users", {"page": "users"})]
    links = "".join(f"<a class='fb-here' href='{esc(href(**q))}'>{esc(t)}</a>" if key == here
                    else f"<a href='{esc(href(**q))}'>{esc(t)}</a>" for key, t, q in items)
    return (f"{STYLE}<div class='fb-nav'><b style='margin-right:20px'>Flinkbench</b>{links}</div>"
            f"<h2 style='margin:8px 0' data-page='{esc(here)}'>{esc(title)}</h2>")


def error(message: str) -> str:
    return f"<p class='fb-error'>{esc(message)}</p>"
