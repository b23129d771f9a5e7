"""The dashboard's Users page (``?page=users``): a teacher's view of a class on one cluster.

Every user with their quota, the slots their jobs hold, and each job's state, restarts and latest
exception, read from ``GET /users/overview`` (runtime.jobmanager.rest.class_view); then two actions a
teacher needs when one student's job goes wrong: cancel any job, and kill a TaskManager to show a
failover (fault injection, when the cluster allows it). Each action asks for confirmation first and
says what the JobManager answered. The page is an admin's: a user's token gets the REST API's 403,
shown as it is.
"""
from __future__ import annotations

import html

from bokeh.layouts import row
from bokeh.models.widgets import Button, Div, Select

from runtime.jobmanager.dashboard import html as h
from runtime.jobmanager.dashboard.pages import Page, PageContext
from runtime.jobmanager.dashboard.source import DashboardError
from runtime.views import text

NONE = "\u2014"  # nothing chosen; a choice reads "<id>  <what it is>" (Bokeh shows a Select's values as they are)


def users_table(overview: dict) -> str:
    """One row per job of each user (a user without jobs gets one row saying so)."""
    rows = []
    for user in overview.get("users") or []:
        quota = "no limit" if user.get("slots") is None else str(user["slots"])
        who = h.esc(user["name"]) + (" <span class='fb-muted'>(admin)</span>" if user.get("admin") else "") + (
            "" if user.get("known", True) else " <span class='fb-muted'>(not in the user table)</span>")
        holding = h.esc(f"{user.get('slots-held', 0)} of {quota}")
        jobs = user.get("jobs") or []
        if not jobs:
            rows.append((who, holding, "<span class='fb-muted'>no jobs</span>", "", "", "", ""))
        for index, job in enumerate(jobs):
            rows.append((who if index == 0 else "", holding if index == 0 else "",
                         h.link(job.get("name") or job["jid"], job=job["jid"]), h.state(job.get("state")),
                         h.esc(job.get("slots", 0)), h.esc(job.get("restarts", 0)), _exception(job)))
    return h.table(["user", "slots held", "job", "state", "slots", "restarts", "latest exception"], rows,
                   name="users")


def _exception(job: dict) -> str:
    if not job.get("last-exception"):
        return "<span class='fb-muted'>none</span>"
    when = text.clock(job["last-exception-time"] / 1000) if job.get("last-exception-time") else ""
    return f"<span class='fb-error'>{h.esc(job['last-exception'])}</span> <span class='fb-muted'>{h.esc(when)}</span>"


def running_jobs(overview: dict) -> list[str]:
    """'<job id>  user: job name' for every job not yet ended, for the cancel action."""
    return [f"{job['jid']}  {user['name']}: {job.get('name') or job['jid']}" for user in overview.get("users") or []
            for job in user.get("jobs") or [] if job.get("state") not in ("FINISHED", "CANCELED", "FAILED")]


def chosen(value: str) -> str:
    """The id a choice starts with ('' for none)."""
    return "" if value == NONE else value.split(" ", 1)[0]


class UsersPage(Page):
    section, title = "users", "Users"

    def __init__(self, ctx: PageContext):
        super().__init__(ctx)
        self.job = Select(title="Job", options=[], value=NONE, width=360, name="users-job")
        self.taskmanager = Select(title="TaskManager", options=[], value=NONE, width=360, name="users-taskmanager")
        self.cancel = Button(label="Cancel job", button_type="danger", name="users-cancel", width=170)
        self.kill = Button(label="Kill TaskManager", button_type="danger", name="users-kill", width=170)
        self.question = Div(text="", name="users-confirmation", sizing_mode="stretch_width")
        self.confirm = Button(label="Confirm", button_type="primary", name="users-confirm", visible=False, width=120)
        self.back = Button(label="Back", name="users-back", visible=False, width=120)
        self.status = Div(text="", name="users-status", sizing_mode="stretch_width")
        self.cancel.on_click(lambda _event=None: self.ask("cancel"))
        self.kill.on_click(lambda _event=None: self.ask("kill"))
        self.confirm.on_click(lambda _event=None: self.ctx.doc.add_next_tick_callback(self._confirmed))  # type: ignore[attr-defined]
        self.back.on_click(lambda _event=None: self._reset())
        self.pending: tuple[str, str] | None = None
        self.layout.children.extend([row(self.job, self.cancel), row(self.taskmanager, self.kill), self.question,
                                     row(self.confirm, self.back), self.status])

    async def render(self) -> str:
        overview = await self.ctx.source.get("/users/overview")
        tms = (await self.ctx.source.get("/taskmanagers")).get("taskmanagers") or []
        _choices(self.job, running_jobs(overview))
        _choices(self.taskmanager, [f"{tm['id']}  ({tm.get('host')}, pid {tm.get('pid')})"
                                    for tm in tms if tm.get("state", "REGISTERED") == "REGISTERED"])
        return users_table(overview)

    def ask(self, action: str) -> None:
        target = chosen(self.job.value if action == "cancel" else self.taskmanager.value)
        if not target:
            self._say(f"choose a {'job' if action == 'cancel' else 'TaskManager'} first", "error")
            return
        self.pending = (action, target)
        question = (f"Cancel job {target}? Its user sees it CANCELED." if action == "cancel" else
                    f"Kill TaskManager {target} (SIGKILL)? Every job on it fails over to the others.")
        self.question.text = f"<b data-action='{action}'>{html.escape(question)}</b>"
        self.confirm.visible = self.back.visible = True

    def _reset(self) -> None:
        self.pending = None
        self.question.text = ""
        self.confirm.visible = self.back.visible = False

    async def _confirmed(self) -> None:
        pending, self.pending = self.pending, None
        self._reset()
        if pending is None:
            return
        action, target = pending
        method, path = (("PATCH", f"/jobs/{target}?mode=cancel") if action == "cancel" else
                        ("POST", f"/taskmanagers/{target}/kill"))
        try:
            await self.ctx.source.call(method, path)
        except DashboardError as err:
            self._say(f"{action} {target} refused: {err}", "error")
            return
        self._say(f"{'cancel of job' if action == 'cancel' else 'kill of TaskManager'} {target} requested", "done")

    def _say(self, message: str, outcome: str) -> None:
        color = "#c00" if outcome == "error" else "#2ca02c"
        self.status.text = f"<div data-outcome='{outcome}' style='color:{color}'>{html.escape(message)}</div>"


def _choices(select: Select, options: list[str]) -> None:
    """Set a Select's options, keeping the chosen value while it is still offered."""
    wanted = [NONE] + options
    if list(select.options) != wanted:
        select.options = wanted  # type: ignore[assignment]
    if select.value not in wanted:
        select.value = NONE
