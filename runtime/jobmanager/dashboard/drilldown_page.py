"""The dashboard's drill-down of one subtask (``?job=<id>&vertex=<id>&subtask=<i>``, opened from a job's
Subtasks tab): its recent Spark stages slowest first, the stage time per plan and the subtask's busy and phase
times (runtime.views.drilldown), with a link to its TaskManager's Spark UI when that TaskManager serves one."""
from __future__ import annotations

from urllib.parse import quote

from runtime.jobmanager.dashboard import html as h
from runtime.jobmanager.dashboard.pages import Page, PageContext
from runtime.views.drilldown import drilldown_html


class DrilldownPage(Page):
    section = "jobs"
    refresh_ms = 2000

    def __init__(self, ctx: PageContext):
        self.job_id, self.vertex, self.subtask = ctx.args["job"], ctx.args.get("vertex", ""), ctx.args["subtask"]
        self.title = f"Subtask {int(self.subtask) + 1 if self.subtask.isdigit() else self.subtask} of job {self.job_id}"
        super().__init__(ctx)

    async def render(self) -> str:
        job = quote(self.job_id, safe="")
        details = await self.ctx.source.get(f"/jobs/{job}")
        vertex = next((v for v in details.get("vertices") or [] if v["id"] == self.vertex), None)
        if vertex is None:
            return h.error(f"job {self.job_id} has no task {self.vertex}")
        info = await self.ctx.source.get(f"/jobs/{job}/vertices/{quote(self.vertex, safe='')}/subtasks/"
                                         f"{quote(self.subtask, safe='')}/spark")
        spark_ui = None
        if info.get("taskmanager-id"):
            tm = await self.ctx.source.get(f"/taskmanagers/{quote(info['taskmanager-id'], safe='')}")
            spark_ui = tm.get("sparkUiUrl")
        back = h.link(f"\u2190 {details.get('name') or self.job_id}", job=self.job_id)
        return f"<p>{back}</p>" + drilldown_html(info, vertex["name"], vertex["parallelism"], spark_ui)
