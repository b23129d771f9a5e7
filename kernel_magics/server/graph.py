"""``graph/<job id>``: the job graph the side panel draws, built on the server from the JobManager's
``GET /jobs/<id>`` by runtime.views.graph, the same model and layout the notebook and the dashboard
draw with Bokeh; the panel only paints the positions, colours and text it is given."""
from __future__ import annotations

import json
from urllib.parse import quote

import tornado.web
from tornado.httpclient import AsyncHTTPClient, HTTPClientError, HTTPRequest

from kernel_magics.server.handlers import CONNECT_TIMEOUT_S, FlinkbenchHandler, _errors, unreachable
from kernel_magics.server.target import TargetError
from runtime.views.graph import job_graph, plan_from_json, subtasks_from_details


class JobGraphHandler(FlinkbenchHandler):
    @tornado.web.authenticated
    async def get(self, job_id: str):
        details = await self._job_details(job_id)
        graph = job_graph(details.get("jid", job_id), plan_from_json(details.get("plan") or {}),
                          subtasks_from_details(details))
        self.finish(json.dumps({**graph.to_json(), "state": details.get("state")}))

    async def _job_details(self, job_id: str) -> dict:
        target = self.target()
        try:
            token, context = target.token(), target.ssl_context()
        except TargetError as err:
            raise tornado.web.HTTPError(502, str(err)) from None
        request = HTTPRequest(f"{target.url}/jobs/{quote(job_id, safe='')}", headers={"Authorization": f"Bearer {token}"},
                              connect_timeout=CONNECT_TIMEOUT_S, request_timeout=self.settings["flinkbench_request_timeout"],
                              ssl_options=context)
        try:
            response = await AsyncHTTPClient().fetch(request, raise_error=False)
        except (OSError, HTTPClientError) as err:
            raise unreachable(target, err) from None
        if response.code == 599:
            raise unreachable(target, response.error)
        if response.code != 200:
            raise tornado.web.HTTPError(502 if response.code == 401 else response.code,
                                        f"GET /jobs/{job_id}: {_errors(response.body)}")
        return json.loads(response.body)
