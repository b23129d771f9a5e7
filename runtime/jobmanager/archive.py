"""Archives of ended jobs (Flink's HistoryServerArchivist): one JSON file per job under
``jobmanager.archive.fs.dir`` (a local directory or any fsspec URL such as ``s3://bucket/archives``).

When a job reaches FINISHED, FAILED or CANCELED, the Dispatcher hands its JobMaster to the
:class:`JobArchivist`, which takes the typed snapshots the REST layer shows (the job with its tasks,
subtasks and their final metrics, its exception history, checkpoint statistics, configuration and the
details of its recent checkpoints) and writes them as ``<dir>/<job id>.json``. The history server
(runtime.history) and a restarted Dispatcher read them back into the same snapshots, so archived jobs
are served by the same REST handlers in the same shapes as live ones.

Every archive write goes through :func:`write_archive`, run under the leader's fence
(runtime.checkpoint.fencing): a JobManager that no longer leads writes no archive. Files are written whole
and durably (storage.write_durably: a local file under a temporary name, synced and renamed; an object store's
put is atomic), so a reader never sees half an archive; one that does not read is skipped with a warning.
"""
from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from runtime.checkpoint import storage
from runtime.checkpoint.fencing import WriteFence, run_fenced
from runtime.codec import WireError, build, to_plain
from runtime.jobgraph import JobGraph
from runtime.jobmanager.gateways import JobMasterGateway
from runtime.snapshots import (CheckpointConfigSnapshot, CheckpointDetailsSnapshot, CheckpointStatsSnapshot,
                               FailureRecord, JobSnapshot)
from runtime.states import JobStatus

log = logging.getLogger(__name__)

FORMAT = "flinkbench-job-archive/1"
SUFFIX = ".json"


@dataclass(frozen=True)
class ArchivedJob:
    """Everything the REST API shows of a job that ended, as typed snapshots."""
    job: JobSnapshot
    exceptions: tuple[FailureRecord, ...]
    checkpoints: CheckpointStatsSnapshot
    checkpoint_config: CheckpointConfigSnapshot
    checkpoint_details: tuple[CheckpointDetailsSnapshot, ...]
    archived_at: float
    job_graph: JobGraph | None = None  # what it was submitted with (the savepoint browser resumes it)

    @property
    def job_id(self) -> str:
        return self.job.summary.job_id

    def details(self, checkpoint_id: int) -> CheckpointDetailsSnapshot | None:
        return next((d for d in self.checkpoint_details if d.record.checkpoint_id == checkpoint_id), None)


class EndingJob(JobMasterGateway, Protocol):
    """A JobMaster as the archivist sees it: its gateway, its graph, its end, and its final snapshot."""

    @property
    def graph(self) -> JobGraph: ...

    async def wait(self) -> JobStatus: ...

    def snapshot(self) -> JobSnapshot: ...


def capture(master: EndingJob, job: JobSnapshot) -> ArchivedJob:
    """What to archive of a job that ended (``job`` is its final snapshot)."""
    stats = master.checkpoint_stats()
    details = tuple(d for r in stats.history if (d := master.checkpoint_details(r.checkpoint_id)) is not None)
    return ArchivedJob(job, tuple(master.failure_history()), stats, master.checkpoint_config(), details, time.time(),
                       master.graph)


def encode(archived: ArchivedJob) -> bytes:
    return json.dumps({"format": FORMAT, "archive": to_plain(archived)}, separators=(",", ":")).encode()


def decode(data: bytes, where: str) -> ArchivedJob:
    """An archive from its bytes; WireError naming ``where`` when it is not one this version reads."""
    try:
        document = json.loads(data)
    except (ValueError, UnicodeDecodeError) as err:
        raise WireError(f"{where} is not JSON: {err}") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        found = document.get("format") if isinstance(document, dict) else None
        raise WireError(f"{where} is not a Flinkbench job archive ({FORMAT}), its format is {found!r}")
    return build(ArchivedJob, document.get("archive"))


def archive_url(directory: str, job_id: str) -> str:
    return storage.join(storage.normalise(directory), job_id + SUFFIX)


def write_archive(directory: str, archived: ArchivedJob) -> str:
    """Write one job's archive (blocks: storage I/O); its URL. The one function that writes archives."""
    url = archive_url(directory, archived.job_id)
    storage.write_durably(url, encode(archived))
    return url


def read_archives(directories: list[str], known: dict[str, ArchivedJob] | None = None) -> dict[str, ArchivedJob]:
    """Every readable archive under ``directories`` by job id (blocks: storage I/O). Archives already in
    ``known`` are not read again; unreadable ones are skipped with a warning."""
    known = known or {}
    found: dict[str, ArchivedJob] = {}
    for directory in directories:
        base = storage.normalise(directory)
        for name in storage.list_dirs(base):
            job_id = name[:-len(SUFFIX)] if name.endswith(SUFFIX) else None
            if job_id is None or job_id in found:
                continue
            if job_id in known:
                found[job_id] = known[job_id]
                continue
            try:
                found[job_id] = decode(storage.read_bytes(storage.join(base, name)), storage.join(base, name))
            except (WireError, storage.StorageError) as err:
                log.warning("skipping the job archive %s: %s", name, err)
    return found


class JobArchivist:
    """Archives each job the Dispatcher hands it once the job has ended; on the JobManager's loop. Each write
    asks the fence ``fence()`` gives at that moment (the leader's; None: unfenced) first, so a JobManager that
    lost its leadership writes no archive."""

    def __init__(self, directory: str, fence: Callable[[], WriteFence | None] = lambda: None):
        self.directory = directory  # jobmanager.archive.fs.dir; empty: nothing is archived
        self.fence = fence
        self.written: dict[str, str] = {}  # job id -> where its archive is

    def follow(self, master: EndingJob) -> None:
        """Archive ``master``'s job when it ends FINISHED, FAILED or CANCELED (not when suspended)."""
        if self.directory:
            asyncio.get_running_loop().create_task(self._archive_when_ended(master))

    async def _archive_when_ended(self, master: EndingJob) -> None:
        try:
            status = await master.wait()
        except asyncio.CancelledError:  # suspended: the job lives on under another leader
            return
        if not status.is_globally_terminal:
            return
        archived = capture(master, master.snapshot())
        try:
            url = await asyncio.get_running_loop().run_in_executor(None, run_fenced, self.fence(), write_archive,
                                                                   self.directory, archived)
        except storage.StorageError as err:
            log.error("job %s: its archive could not be written: %s", archived.job_id, err)
            return
        self.written[archived.job_id] = url
        log.info("job %s (%s) archived to %s", archived.job_id, archived.job.summary.name, url)
