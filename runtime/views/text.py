"""Numbers as the views print them: short, with units, the same in every view."""
from __future__ import annotations

import time


def rate(per_s: float | None) -> str:
    """Records per second: ``950/s``, ``12.3k/s``, ``4.1M/s``."""
    if per_s is None:
        return "-"
    for scale, unit in ((1e6, "M"), (1e3, "k")):
        if abs(per_s) >= scale:
            return f"{per_s / scale:.1f}{unit}/s"
    return f"{per_s:.0f}/s"


def count(n: float | None) -> str:
    return "-" if n is None else f"{int(n):,}"


def size(n: float | None) -> str:
    """Bytes: ``512 B``, ``3.4 KiB``, ``1.2 MiB``."""
    if n is None:
        return "-"
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(value) < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GiB"


def seconds(s: float | None) -> str:
    """A duration: ``850 ms``, ``3.2 s``, ``4 min 10 s``, ``2 h 5 min``."""
    if s is None:
        return "-"
    if s < 1:
        return f"{s * 1000:.0f} ms"
    if s < 60:
        return f"{s:.1f} s"
    if s < 3600:
        return f"{int(s // 60)} min {int(s % 60)} s"
    if s < 86400:
        return f"{int(s // 3600)} h {int(s % 3600 // 60)} min"
    return f"{int(s // 86400)} d {int(s % 86400 // 3600)} h"


def percent(share: float | None) -> str:
    return "-" if share is None else f"{round(share * 100)} %"


def clock(ts: float | None) -> str:
    """A wall-clock time (UTC) of an epoch-seconds timestamp: ``2024-05-01 12:00:03``."""
    if not ts or ts < 0:
        return "-"
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(ts))
