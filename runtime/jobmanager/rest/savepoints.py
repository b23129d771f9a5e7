"""The savepoint browser's routes (Flinkbench's own): ``GET /savepoints`` (savepoints and retained
checkpoints across jobs; ``?dir=`` adds directories to look in), ``GET /savepoints/details?path=`` (each
operator's rows and keys), ``POST /savepoints/compatibility`` (how one fits a job about to start from it)
and ``POST /savepoints/resume`` (the job that took it, started again from it). Disposal is Flink's
``POST /savepoint-disposal``. They see the JobManager's SavepointBrowser; a process without one (the
history server) answers 404."""
from __future__ import annotations

from runtime.checkpoint.savepoints import Compatibility, OperatorState, SavepointSummary
from runtime.jobmanager.rest import messages as m
from runtime.jobmanager.rest.base import ApiHandler, HTTPError, Query, operation
from runtime.jobmanager.rest.convert import ms
from runtime.jobmanager.savepoint_browser import SavepointBrowser


def entry(s: SavepointSummary, names: dict[str, str]) -> m.SavepointEntry:
    return m.SavepointEntry(
        path=s.path, kind=s.kind, checkpoint_id=s.checkpoint_id, job_id=s.job_id, job_name=names.get(s.job_id),
        timestamp=ms(s.timestamp), max_parallelism=s.max_parallelism, parallelism=max(s.parallelism.values(), default=0),
        size=s.size, operators=dict(s.parallelism), state=[operator_state(o) for o in s.state])


def operator_state(o: OperatorState) -> m.OperatorStateInfo:
    return m.OperatorStateInfo(operator_id=o.operator_id, kinds=list(o.kinds), subtasks=o.subtasks, bytes=o.bytes,
                               rows=o.rows, keys=o.keys)


def compatibility(c: Compatibility) -> m.CompatibilityInfo:
    return m.CompatibilityInfo(
        path=c.savepoint, compatible=c.compatible, needs_allow_non_restored_state=bool(c.dropped),
        matched=list(c.matched), dropped=list(c.dropped), new=list(c.new),
        rescaled=[m.RescaledOperator(operator_id=op, old=old, new=new) for op, (old, new) in c.rescaled.items()],
        problems=c.problems)


class SavepointHandler(ApiHandler):
    admin_only = "the savepoint browser (it lists every user's savepoints)"

    @property
    def browser(self) -> SavepointBrowser:
        if self.ctx.savepoints is None:
            raise HTTPError(404, "this process browses no savepoints: ask a JobManager")
        return self.ctx.savepoints

    def path_argument(self) -> str:
        path = self.get_query_argument("path", "").strip()
        if not path:
            raise HTTPError(400, "query parameter 'path' must name a savepoint or checkpoint directory")
        return path


class SavepointsHandler(SavepointHandler):
    @operation("Savepoints and retained checkpoints under state.savepoints.dir and state.checkpoints.dir, newest "
               "first: when, which job, parallelism, each operator's state.", m.SavepointsList,
               query=(Query("dir", "more directories or URLs to look in, comma-separated"),))
    async def get(self):
        extra = [d.strip() for d in self.get_query_argument("dir", "").split(",") if d.strip()]
        directories, found = await self.browser.list(extra)
        names = self.browser.job_names()
        return m.SavepointsList(directories=directories, savepoints=[entry(s, names) for s in found])


class SavepointDetailsHandler(SavepointHandler):
    @operation("One savepoint or retained checkpoint with each operator's rows and distinct keys.", m.SavepointEntry,
               query=(Query("path", "the directory holding its _metadata"),))
    async def get(self):
        return entry(await self.browser.describe(self.path_argument()), self.browser.job_names())


class CompatibilityHandler(SavepointHandler):
    @operation("How a savepoint fits a job about to start from it: state restored, state that would be dropped "
               "(needs allowNonRestoredState), operators that start empty, rescaled ones.", m.CompatibilityInfo,
               request=m.CompatibilityRequestBody)
    async def post(self):
        body = self.body(m.CompatibilityRequestBody)
        if (body.job_graph is None) == (body.job_id is None):
            raise HTTPError(400, "give the job to check against as 'job_graph' or as 'job_id', one of them")
        graph = body.job_graph if body.job_graph is not None else self.browser.graph_json(body.job_id or "")
        return compatibility(await self.browser.check(body.path, graph, body.allow_non_restored_state))


class ResumeHandler(SavepointHandler):
    @operation("Start the job that took a savepoint again from it (a new job id).", m.JobSubmitResponseBody,
               status=202, request=m.ResumeRequestBody)
    async def post(self):
        body = self.body(m.ResumeRequestBody)
        job_id = await self.browser.resume(body.path, body.allow_non_restored_state)
        return m.JobSubmitResponseBody(job_url=f"/jobs/{job_id}", jobid=job_id)
