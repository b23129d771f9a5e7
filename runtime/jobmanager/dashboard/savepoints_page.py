"""The dashboard's savepoint browser: every savepoint and retained checkpoint (``?page=savepoints``), and one
of them (``?savepoint=<path>``) with each operator's state and keys, a check against a running or archived
job's graph, and its actions: resume the job that took it, or dispose of it (each confirmed after showing
its REST call and ``flinkbench`` line). Everything comes from the JobManager's savepoint routes."""
from __future__ import annotations

from urllib.parse import quote

from bokeh.layouts import row
from bokeh.models.widgets import Button, CheckboxGroup, Div, Select

from runtime.jobmanager.dashboard import html as h
from runtime.jobmanager.dashboard.actions import ActionPanel, JobAction
from runtime.jobmanager.dashboard.pages import Page, PageContext
from runtime.jobmanager.dashboard.source import DashboardError
from runtime.views import text


def savepoints_table(savepoints: list[dict]) -> str:
    rows = [(h.link(s["path"], savepoint=s["path"]), h.esc(s["kind"]), h.esc(s["id"]),
             h.link(s.get("job-name") or s["job-id"], job=s["job-id"]), h.esc(text.clock(s["timestamp"] / 1000)),
             h.esc(s["parallelism"]), h.esc(text.size(s["size"])), h.esc(", ".join(o["operator"] for o in s["state"])))
            for s in savepoints]
    return h.table(["path", "kind", "id", "job", "taken", "parallelism", "size", "state of"], rows, name="savepoints")


def state_table(entry: dict) -> str:
    rows = [(h.esc(o["operator"]), h.esc(", ".join(o["kinds"])), h.esc(o["subtasks"]), h.esc(text.size(o["bytes"])),
             h.esc(o.get("rows", "-")), h.esc(o.get("keys", "-"))) for o in entry["state"]]
    return h.table(["operator", "state", "subtasks", "bytes", "rows", "keys"], rows, name="savepoint-state")


def fit_html(fit: dict) -> str:
    verdict = ("<b style='color:#2ca02c'>fits: the job can start from it</b>" if fit["compatible"]
               else "<b style='color:#d62728'>refused as submitted</b>")
    pairs = [("verdict", verdict), ("restored", h.esc(", ".join(fit["matched"]) or "-")),
             ("dropped (needs --allowNonRestoredState)", h.esc(", ".join(fit["dropped"]) or "-")),
             ("start empty", h.esc(", ".join(fit["new"]) or "-")),
             ("rescaled", h.esc(", ".join(f"{r['operator']} {r['from']} \u2192 {r['to']}" for r in fit["rescaled"]) or "-"))]
    return h.key_values(pairs, name="savepoint-fit") + "".join(h.error(p) for p in fit["problems"])


def savepoint_actions(path: str) -> list[JobAction]:
    return [
        JobAction("resume", "Resume its job", "Start the job that took it again from it (a new job)?", "POST",
                  "/savepoints/resume", {"path": path, "allowNonRestoredState": False}, f"run -s {path} job.py", False),
        JobAction("dispose", "Dispose", "Delete this savepoint? It cannot be restored from afterwards.", "POST",
                  "/savepoint-disposal", {"savepoint-path": path}, f"savepoint --dispose {path}", True),
    ]


class SavepointsPage(Page):
    section, title = "savepoints", "Savepoints"
    refresh_ms = 5000  # every refresh lists the storage

    async def render(self) -> str:
        answer = await self.ctx.source.get("/savepoints")
        where = ", ".join(answer.get("directories") or [])
        return savepoints_table(answer.get("savepoints") or []) + f"<p class='fb-muted'>under {h.esc(where)}</p>"


class SavepointPage(Page):
    """One savepoint: its state, a check against a job, resume and dispose."""
    section = "savepoints"
    refresh_ms = 10_000

    def __init__(self, ctx: PageContext):
        self.path = ctx.args["savepoint"]
        self.title = f"Savepoint {self.path}"
        super().__init__(ctx)
        self.jobs = Select(title="check against the job", options=[], name="savepoint-check-job", width=420)
        self.allow = CheckboxGroup(labels=["allow non-restored state"], name="savepoint-allow")
        self.check = Button(label="Check", name="savepoint-check", width=120)
        self.report = Div(text="", name="savepoint-fit", sizing_mode="stretch_width")
        self.check.on_click(lambda _event=None: ctx.doc.add_next_tick_callback(self._check))
        self.actions = ActionPanel(ctx.doc, ctx.source, savepoint_actions(self.path), ctx.token_file,
                                   lambda trigger: f"/savepoint-disposal/{trigger}", ctx.cli_commands)
        self.allow.on_change("active", lambda _attr, _old, _new: self._allow_changed())
        self.layout.children.extend([row(self.jobs, self.allow, self.check), self.report, self.actions.layout])

    def _allowed(self) -> bool:
        return bool(self.allow.active)

    def _allow_changed(self) -> None:
        resume = self.actions.actions["resume"]
        self.actions.actions["resume"] = JobAction(
            resume.key, resume.label, resume.question, resume.method, resume.path,
            {"path": self.path, "allowNonRestoredState": self._allowed()},
            f"run -s {self.path}" + (" --allowNonRestoredState" if self._allowed() else "") + " job.py", False)

    async def _check(self) -> None:
        if not self.jobs.value:
            self.report.text = h.error("choose a job to check against")
            return
        try:
            fit = await self.ctx.source.call("POST", "/savepoints/compatibility", {
                "path": self.path, "job_id": self.jobs.value, "allowNonRestoredState": self._allowed()})
        except DashboardError as err:
            self.report.text = h.error(str(err))
            return
        self.report.text = fit_html(fit)

    async def render(self) -> str:
        entry = await self.ctx.source.get(f"/savepoints/details?path={quote(self.path)}")
        jobs = (await self.ctx.source.get("/jobs/overview")).get("jobs") or []
        options = [(j["jid"], f"{j.get('name')} ({j['jid'][:8]}, {j.get('state')})") for j in jobs]
        if options != self.jobs.options:
            self.jobs.options = options
            self.jobs.value = self.jobs.value or next((o[0] for o in options if o[0] == entry["job-id"]), options[0][0]
                                                      if options else "")
        facts = h.key_values([
            ("kind", h.esc(entry["kind"])), ("id", h.esc(entry["id"])),
            ("job", h.link(entry.get("job-name") or entry["job-id"], job=entry["job-id"])),
            ("taken", h.esc(text.clock(entry["timestamp"] / 1000))), ("parallelism", h.esc(entry["parallelism"])),
            ("max parallelism", h.esc(entry.get("maxParallelism"))), ("size", h.esc(text.size(entry["size"]))),
            ("path", f"<code>{h.esc(entry['path'])}</code>")], name="savepoint")
        return f"{facts}<h3>State</h3>{state_table(entry)}"
