"""``graph/<job id>``: the job graph the side panel draws, built on the server from the JobManager's
``GET /jobs/<id>`` by runtime.views.graph, the same model and layout the notebook and the dashboard
draw with Bokeh; the panel only paints the positions, colours and text it is given."""
from __future__ import annotations

import json
from urllib.parse import quote

import tornado.web

from kernel_magics.server.handlers import FlinkbenchHandler, _errors, call_jobmanager
from runtime.views.graph import job_graph, plan_from_json, subtasks_from_details


class JobGraphHandler(FlinkbenchHandler):
    @tornado.web.authenticated
    async def get(self, job: str, kernel: str | None = None):
        details = await self._job_details(job, kernel)
        graph = job_graph(details.get("jid", job), plan_from_json(details.get("plan") or {}),
                          subtasks_from_details(details))
        self.finish(json.dumps({**graph.to_json(), "state": details.get("state")}))

    async def _job_details(self, job_id: str, kernel: str | None) -> dict:
        response = await call_jobmanager(self.target(kernel), f"jobs/{quote(job_id, safe='')}",
                                         self.settings["flinkbench_request_timeout"])
        if response.code != 200:
            raise tornado.web.HTTPError(response.code, f"GET /jobs/{job_id}: {_errors(response.body)}")
        return json.loads(response.body)
