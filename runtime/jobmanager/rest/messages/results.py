"""Collected results and push sources (Flinkbench's own)."""
from __future__ import annotations


from runtime.jobmanager.rest.fields import F, RawJson, message


# -- results and push sources (Flinkbench's own) ---------------------------------------------
@message
class JobResultsPage:
    """Collected rows from ``offset`` (``?format=arrow`` answers an Arrow IPC stream instead)."""
    offset: int = F("offset")
    next: int = F("next")
    total: int = F("total")
    dropped: int = F("dropped", doc="rows evicted from the JobManager's buffer before this reader got them")
    finished: bool = F("finished")
    job_state: str = F("job-state")
    columns: list[str] = F("columns")
    rows: list[RawJson] = F("rows")


@message
class PushSourceInfo:
    id: str = F("id")
    name: str = F("name")
    schema: str = F("schema")
    rows: int = F("rows")
    closed: bool = F("closed")


@message
class PushSourcesInfo:
    sources: list[PushSourceInfo] = F("sources")


@message
class PushRowsResponseBody:
    source: str = F("source")
    name: str = F("name")
    rows: int = F("rows")
    offsets: list[int] = F("offsets", doc="first (inclusive) and end (exclusive) offset of the rows taken")
    total: int = F("total")


@message
class SourceClosedResponseBody:
    source: str = F("source")
    name: str = F("name")
    closed: bool = F("closed")
    total: int = F("total")
