"""The savepoint browser: savepoints and retained checkpoints across jobs, what each holds, whether one fits a
job about to start, and resuming the job that took one from it.

It looks under the cluster's ``state.savepoints.dir`` and ``state.checkpoints.dir`` (and directories a
caller names), reads through runtime.checkpoint.savepoints in a thread (storage I/O), and knows jobs only
through the Dispatcher's gateway: their names, the graph a job was submitted with (running, or from its
archive), and submission. Disposal is the REST API's savepoint disposal. Runs on the JobManager's loop.
"""
from __future__ import annotations

import asyncio
import dataclasses

from runtime.checkpoint import savepoints, storage
from runtime.checkpoint.savepoints import Compatibility, SavepointSummary
from runtime.config import ConfigError, Configuration
from runtime.errors import SubmissionError
from runtime.ids import JobId
from runtime.jobgraph import job_graph_json, read_job_graph
from runtime.jobmanager.gateways import DispatcherGateway, OperationRefused, UnknownJob


class SavepointBrowser:
    def __init__(self, conf: Configuration, working_dir: str, gateway: DispatcherGateway):
        self.conf, self.gateway = conf, gateway
        checkpoints, saved = storage.locations(conf.get("state.checkpoints.dir"), conf.get("state.savepoints.dir"),
                                               working_dir)
        self.directories = [saved, checkpoints]

    async def _blocking(self, fn, *args):
        return await asyncio.get_running_loop().run_in_executor(None, fn, *args)

    async def list(self, extra: list[str]) -> tuple[list[str], list[SavepointSummary]]:
        """Every savepoint and retained checkpoint under the configured directories and ``extra``."""
        directories = list(dict.fromkeys(self.directories + [storage.normalise(d) for d in extra]))
        return directories, await self._blocking(savepoints.find, directories)

    async def describe(self, path: str) -> SavepointSummary:
        """One of them with each operator's rows and distinct keys (reads its keyed state)."""
        return await self._blocking(lambda: savepoints.describe(path, keys=True))

    def job_names(self) -> dict[str, str]:
        return {s.job_id: s.name for s in self.gateway.list_jobs()}

    def graph_json(self, job_id: str) -> dict:
        """The JSON form of the graph job ``job_id`` was submitted with (running or archived)."""
        graph = self.gateway.job_graph(job_id)
        if graph is None:
            raise UnknownJob(job_id)
        return job_graph_json(graph)

    async def check(self, path: str, job_graph: dict, allow_non_restored_state: bool) -> Compatibility:
        """How the savepoint at ``path`` fits the job ``job_graph`` (its JSON form) about to start from it."""
        graph = read_job_graph(job_graph)
        try:
            conf = self.conf.with_overrides(graph.config)
        except ConfigError as err:
            raise SubmissionError(f"job configuration: {err}") from None
        found = await self._blocking(savepoints.describe, path)
        return savepoints.check(found, graph, conf.get("pipeline.max-parallelism"), conf.get("parallelism.default"),
                                allow_non_restored_state or conf.get(savepoints.IGNORE_UNCLAIMED))

    async def resume(self, path: str, allow_non_restored_state: bool) -> JobId:
        """Submit the job that took the savepoint again, starting from it (a new job id); refused when that
        job's graph is not known here (submit it yourself with --from-savepoint)."""
        found = await self._blocking(savepoints.describe, path)
        graph = self.gateway.job_graph(found.job_id)
        if graph is None:  # not known here
            raise OperationRefused(f"the job {found.job_id} that took {found.path} is not known here (neither running "
                                   "nor archived): start it with --from-savepoint PATH")
        config = {**graph.config, **({savepoints.IGNORE_UNCLAIMED: "true"} if allow_non_restored_state else {})}
        resumed = dataclasses.replace(graph, restore_from=found.path, config=config)
        return self.gateway.submit({"job_graph": job_graph_json(resumed)})
