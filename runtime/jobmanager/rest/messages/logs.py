"""Log files as Flink's log endpoints list them."""
from __future__ import annotations

from runtime.jobmanager.rest.fields import F, message


@message
class LogInfo:
    name: str = F("name")
    size: int = F("size", doc="bytes")
    mtime: int = F("mtime", doc="last modified (ms since the epoch)")


@message
class LogListInfo:
    logs: list[LogInfo] = F("logs")
