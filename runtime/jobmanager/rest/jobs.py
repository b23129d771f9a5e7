"""REST handlers for jobs: submission, lists, details, status, cancellation, exceptions, plan, and
each task (vertex) with its backpressure and watermarks."""
from __future__ import annotations

import time

from runtime.jobmanager.rest import convert
from runtime.jobmanager.rest import messages as m
from runtime.jobmanager.rest.base import ApiHandler, HTTPError, Query, operation
from runtime.snapshots import VertexSnapshot


class JobsHandler(ApiHandler):
    @operation("Every job's id and state.", m.JobIdsWithStatusOverview)
    def get(self):
        return m.JobIdsWithStatusOverview(jobs=[m.JobIdWithStatus(id=j.job_id, status=j.state.value)
                                                for j in self.gateway.list_jobs()])

    @operation("Submit a job graph (the JSON form of runtime.jobgraph.JobGraph).", m.JobSubmitResponseBody,
               status=202, request=m.JobSubmitRequestBody)
    def post(self):
        body = self.body(m.JobSubmitRequestBody)
        payload = {"job_graph": body.job_graph, **({"job_id": body.job_id} if body.job_id else {})}
        job_id = self.gateway.submit(payload)
        return m.JobSubmitResponseBody(job_url=f"/jobs/{job_id}", jobid=job_id)


class JobsOverviewHandler(ApiHandler):
    @operation("Every job with its times, state and subtask counts (what `flink list` shows).", m.MultipleJobsDetails)
    def get(self):
        now = time.time()
        return m.MultipleJobsDetails(jobs=[convert.job_details(j, now) for j in self.gateway.list_jobs()])


class JobHandler(ApiHandler):
    @operation("A job in full: its tasks with their subtasks and metrics, the plan, when it entered each state.",
               m.JobDetailsInfo)
    def get(self, jobid):
        return convert.job_details_info(self.gateway.request_job(jobid), time.time())

    @operation("Cancel the job (it reaches CANCELED on its own).", None, status=202,
               query=(Query("mode", "cancel (the only mode)"),))
    def patch(self, jobid):
        mode = self.get_query_argument("mode", "cancel")
        if mode != "cancel":
            raise HTTPError(400, f"unsupported mode {mode!r}: expected 'cancel'")
        self.gateway.cancel_job(jobid)
        return {}


class JobStatusHandler(ApiHandler):
    @operation("The job's state.", m.JobStatusInfo)
    def get(self, jobid):
        return m.JobStatusInfo(status=self.gateway.job_status(jobid).value)


class JobExceptionsHandler(ApiHandler):
    @operation("Failures the job handled, newest first (restarts included).", m.JobExceptionsInfoWithHistory,
               query=(Query("maxExceptions", "at most this many entries", int),))
    def get(self, jobid):
        records = self.gateway.job_exceptions(jobid)
        limit = self.int_query("maxExceptions", len(records))
        view = convert.exceptions(records[:limit])
        view.exception_history.truncated = limit < len(records)
        return view


class JobPlanHandler(ApiHandler):
    @operation("The job's dataflow plan: one node per task, with inputs and ship strategies.", m.JobPlanInfo)
    def get(self, jobid):
        return m.JobPlanInfo(plan=convert.job_plan(self.gateway.request_job(jobid)))


class VertexHandlerBase(ApiHandler):
    def vertex(self, jobid: str, vertexid: str) -> VertexSnapshot:
        found = self.gateway.request_job(jobid).vertex(vertexid)
        if found is None:
            raise HTTPError(404, f"job {jobid} has no task (vertex) {vertexid}")
        return found


class VertexHandler(VertexHandlerBase):
    @operation("One task with each subtask's attempt, TaskManager, times and metrics.", m.JobVertexDetailsInfo)
    def get(self, jobid, vertexid):
        return convert.vertex_info(self.vertex(jobid, vertexid), time.time())


class BackPressureHandler(VertexHandlerBase):
    @operation("How much of the time each subtask waited for its consumers (credit-based flow control).",
               m.JobVertexBackPressureInfo)
    def get(self, jobid, vertexid):
        return convert.backpressure(self.vertex(jobid, vertexid), time.time())


class WatermarksHandler(VertexHandlerBase):
    @operation("Each subtask's current input watermark (ms), as Flink's metric list.", list[m.Metric])
    def get(self, jobid, vertexid):
        return convert.watermarks(self.vertex(jobid, vertexid))
