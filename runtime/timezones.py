"""The SQL session's time zone (Flink's ``table.local-time-zone``): how it is written and what it means.

Flink takes a region id (``Europe/Berlin``), ``UTC``, an offset (``GMT+08:00``) or ``default``, the
zone of the machine the client runs on. TIMESTAMP_LTZ values are instants shown in this zone; Arrow
names a fixed offset as ``+08:00``, so offsets are kept in that form. Below every other module: it
imports nothing of Flinkbench.
"""
from __future__ import annotations

import os
import re
from typing import Any

DEFAULT = "default"
_OFFSET = re.compile(r"(?:GMT|UTC)?([+-])(\d{1,2})(?::?(\d{2}))?")
HINT = "a time zone id such as 'UTC' or 'Europe/Berlin', an offset such as 'GMT+08:00', or 'default'"


def parse_zone(value: Any) -> str:
    """``value`` as a zone Arrow and zoneinfo understand (offsets as ``+HH:MM``), or ``default``;
    ValueError (with what is expected) for anything else."""
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    text = str(value).strip() if isinstance(value, str) else ""
    if text == DEFAULT:
        return text
    offset = _OFFSET.fullmatch(text)
    if offset:
        sign, hours, minutes = offset.group(1), int(offset.group(2)), int(offset.group(3) or 0)
        if hours > 18 or minutes > 59:
            raise ValueError(HINT)
        return f"{sign}{hours:02d}:{minutes:02d}"
    try:
        ZoneInfo(text)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(HINT) from None
    return text


def resolve(zone: str | None) -> str:
    """The zone ``default`` (or nothing) stands for: the machine's own (``TZ``, then /etc/localtime), else UTC."""
    if zone and zone != DEFAULT:
        return zone
    configured = os.environ.get("TZ", "").lstrip(":")
    if configured:
        try:
            return parse_zone(configured)
        except ValueError:
            pass
    try:
        link = os.path.realpath("/etc/localtime")
    except OSError:
        return "UTC"
    return link.split("zoneinfo/", 1)[1] if "zoneinfo/" in link else "UTC"
