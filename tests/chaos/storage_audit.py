"""The chaos run's verdict on the storage trace (runtime.checkpoint.trace): which process wrote, renamed or
deleted which path, and whether it had already lost its leadership or its attempt was superseded. Pure.

The truth it judges by, from the trace itself:

- a leader session begins at the round that won it (the ``leading`` record of its JobManager) and ends
  when the next different session begins: from then on another JobManager may act on the same files;
- a subtask attempt is superseded by the first ``superseded`` record naming it (its JobMaster failed over,
  cancelled, or lost its leadership), and at the latest when its leader session ends.

An operation of a JobManager after its session ended, of an attempt after it was superseded outside its
own snapshot directory (the one named after the attempt, where a stale upload lands aside), or of any
process with no fence at all, is a violation; a run passes with none. Refused operations (a fence said
no) and late uploads that landed aside are counted as figures.
"""
from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class StorageAudit:
    operations: int  # writes and deletes that went ahead
    refused: int  # refused by the writer's fence ("fenced write refused")
    by_deposed_leaders: int  # by a JobManager after its leader session ended
    by_superseded_attempts: int  # by a superseded attempt outside its own snapshot directory
    unfenced: int  # by a process with no fence (every write of checkpoint or HA storage must have one)
    late_aside: int  # uploads of superseded attempts that landed in their own directory (written aside)
    sessions: int  # leader sessions seen
    examples: tuple[str, ...] = ()

    @property
    def violations(self) -> int:
        return self.by_deposed_leaders + self.by_superseded_attempts + self.unfenced

    @property
    def ok(self) -> bool:
        return self.violations == 0


def read_trace(path: str) -> list[dict]:
    """The records of a trace file (a line cut short by a killed process is skipped)."""
    records = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            try:
                records.append(json.loads(line))
            except ValueError:
                continue
    return records


def session_ends(records: Iterable[dict]) -> dict[str, float]:
    """Each leader session's end: when the next different session began (inf for the last)."""
    starts: list[tuple[float, str]] = []
    for r in sorted((r for r in records if r["kind"] == "leading"), key=lambda r: r["t"]):
        if not starts or starts[-1][1] != r["session"]:
            starts.append((r["t"], r["session"]))
    ends = {session: math.inf for _, session in starts}
    for (_, session), (next_start, _) in zip(starts, starts[1:]):
        ends[session] = min(ends[session], next_start)
    return ends


def superseded_at(records: Iterable[dict]) -> dict[str, float]:
    """Each attempt's first supersession."""
    found: dict[str, float] = {}
    for r in records:
        if r["kind"] == "superseded":
            for attempt in r["attempts"]:
                found[attempt] = min(found.get(attempt, math.inf), r["t"])
    return found


def audit(records: list[dict]) -> StorageAudit:
    ends, superseded = session_ends(records), superseded_at(records)
    counts = {"operations": 0, "refused": 0, "leaders": 0, "attempts": 0, "unfenced": 0, "aside": 0}
    examples: list[str] = []
    for r in (r for r in records if r["kind"] == "storage"):
        if r.get("refused"):
            counts["refused"] += 1
            continue
        counts["operations"] += 1
        kind = _violation(r, ends, superseded)
        if kind == "aside":
            counts["aside"] += 1
        elif kind:
            counts[kind] += 1
            if len(examples) < 5:
                examples.append(f"{kind}: pid {r['pid']} {r['op']} {r['url']} at {r['t']:.3f} (token {r.get('token')})")
    return StorageAudit(counts["operations"], counts["refused"], counts["leaders"], counts["attempts"],
                        counts["unfenced"], counts["aside"], len(ends), tuple(examples))


def _violation(r: dict, ends: dict[str, float], superseded: dict[str, float]) -> str | None:
    token = r.get("token")
    if not token:
        return "unfenced"
    session_end = ends.get(token.get("session"), math.inf)
    if token.get("role") == "jobmanager":
        return "leaders" if r["t"] > session_end else None
    attempt = token.get("attempt", "")
    if r["t"] <= min(superseded.get(attempt, math.inf), session_end):
        return None
    return "aside" if attempt and attempt in r["url"] else "attempts"
