"""``%flink users``: the teacher's view of a class on one cluster, in the notebook.

The same as the dashboard's Users page (``GET /users/overview``, an admin's): one row per job of each
user, with the user's quota and the slots their jobs hold, the job's state, slots, restarts and latest
exception; a user without jobs is one row too. With a user's token the JobManager refuses it (403), and
that refusal is the one line shown.
"""
from __future__ import annotations

from IPython.core.magic_arguments import magic_arguments, parse_argstring

from kernel_magics import api_hints
from kernel_magics.commands.subcommand import subcommand
from kernel_magics.commands.cluster import show_api_option
from kernel_magics.errors import translating

COLUMNS = ["user", "quota", "slots held", "job", "state", "slots", "restarts", "latest exception", "id"]


def rows_of(overview: dict) -> list[dict]:
    """The class overview as table rows: one per job, or one per user without jobs."""
    rows = []
    for user in overview.get("users") or []:
        base = {"user": user["name"], "quota": user.get("slots"), "slots held": user.get("slots-held", 0)}
        for job in user.get("jobs") or [{}]:
            rows.append({**base, "job": job.get("name"), "state": job.get("state"), "slots": job.get("slots"),
                         "restarts": job.get("restarts"), "latest exception": job.get("last-exception"),
                         "id": job.get("jid")})
    return rows


@subcommand("users")
@magic_arguments(name="flink users")
@show_api_option
@translating("cannot show the users")
def users(session, line: str):
    """Every user of the cluster with their jobs, slots, restarts and latest exceptions (an admin's view)."""
    import pandas as pd

    args = parse_argstring(users, line)
    client = session.require_client()
    overview = client.get("/users/overview")
    if args.show_api:
        api_hints.show(client.url, session.token_file, "GET", "/users/overview", cli="users list")
    return pd.DataFrame(rows_of(overview), columns=COLUMNS)
