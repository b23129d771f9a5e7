"""Running the conformance cases on Flinkbench, comparing with Apache Flink's answers, and the report.

A case's verdict: ``exact`` (the same final table, types included), ``refused`` (Flinkbench said clearly that it
does not run the query: an SqlError at planning), ``different`` (another table: the suite fails), ``failed``
(Flinkbench's job failed or gave no answer: the suite fails), or ``not counted`` (Apache Flink rejects the query).
"""
from __future__ import annotations

import math
import time
from collections import Counter
from dataclasses import dataclass

from runtime.changelog import materialize
from runtime.sql.errors import SqlError
from tests.helpers.sql_values import encode

VERDICTS = ("exact", "refused", "different", "failed", "not counted")
JOB_TIMEOUT_S = 180


@dataclass
class Outcome:
    page: str
    name: str
    sql: str
    verdict: str
    detail: str = ""
    seconds: float = 0.0  # Flinkbench's time for the query


def flinkbench_answer(t_env, sql: str) -> dict:
    """{"rows": [...]} (the final table), {"refused": message} or {"failed": message}, with "seconds"."""
    started = time.monotonic()
    try:
        result = t_env.execute_sql(sql)
    except SqlError as err:
        return {"refused": f"{type(err).__name__}: {err}", "seconds": time.monotonic() - started}
    try:
        result.wait(JOB_TIMEOUT_S * 1000)
        rows = materialize(list(result.collect()))
    except Exception as err:  # noqa: BLE001 - a job that fails or hangs is this case's verdict, not the suite's end
        job = result.get_job_client()
        if job is not None and job.status() not in ("FINISHED", "FAILED", "CANCELED"):
            job.cancel()
        return {"failed": f"{type(err).__name__}: {str(err).strip()[:600]}", "seconds": time.monotonic() - started}
    return {"rows": [tuple(r) for r in rows], "seconds": time.monotonic() - started}


def verdict(page: str, name: str, sql: str, flink: dict, ours: dict) -> Outcome:
    """The outcome of one case from both engines' answers."""
    seconds = ours.get("seconds", 0.0)
    if "error" in flink:
        return Outcome(page, name, sql, "not counted", f"Flink: {flink['error']}", seconds)
    if "refused" in ours:
        return Outcome(page, name, sql, "refused", ours["refused"], seconds)
    if "failed" in ours:
        return Outcome(page, name, sql, "failed", ours["failed"], seconds)
    difference = compare(flink["rows"], ours["rows"])
    return Outcome(page, name, sql, "different" if difference else "exact", difference, seconds)


def compare(expected: list[tuple], got: list[tuple]) -> str:
    """"" when both multisets of rows are equal with their types (floats to 1e-9 relative), else what differs."""
    want, have = sorted(_keys(expected)), sorted(_keys(got))
    if len(want) != len(have):
        return f"{len(have)} rows, Flink {len(want)}: missing {_missing(want, have)[:3]}, extra {_missing(have, want)[:3]}"
    for a, b in zip(want, have):
        if not _same(a, b):
            return f"first difference: Flink {a}, Flinkbench {b}"
    return ""


def _keys(rows: list[tuple]) -> list:
    return [encode(list(r)) for r in rows]


def _missing(rows: list, others: list) -> list:
    left = Counter(map(repr, others))
    out = []
    for r in rows:
        if left[repr(r)]:
            left[repr(r)] -= 1
        else:
            out.append(r)
    return out


def _same(a, b) -> bool:
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if a == b:
        return True
    return isinstance(a, float) and isinstance(b, float) and math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def report(outcomes: list[Outcome]) -> str:
    """Per page: cases, counted (Flink answers), exact, refused, different, failed, and the share exact."""
    pages: dict[str, Counter] = {}
    for o in outcomes:
        pages.setdefault(o.page, Counter())[o.verdict] += 1
    header = f"{'page':<34} {'cases':>5} {'counted':>7} {'exact':>5} {'refused':>7} {'different':>9} {'failed':>6}"
    lines = [header, "-" * len(header)]
    total: Counter = Counter()
    for page, counts in sorted(pages.items()):
        total.update(counts)
        lines.append(_line(page, counts))
    lines += ["-" * len(header), _line("all", total)]
    counted = sum(total[v] for v in VERDICTS[:4])
    share = 100.0 * total["exact"] / counted if counted else 0.0
    lines.append(f"exact: {total['exact']} of {counted} counted ({share:.1f} %); not counted (Flink rejects): "
                 f"{total['not counted']}; Flinkbench time {sum(o.seconds for o in outcomes):.0f} s")
    for o in outcomes:
        if o.verdict != "exact":
            lines.append(f"[{o.verdict}] {o.page} / {o.name}: {o.detail}")
    return "\n".join(lines)


def _line(page: str, counts: Counter) -> str:
    counted = sum(counts[v] for v in VERDICTS[:4])
    return (f"{page:<34} {sum(counts.values()):>5} {counted:>7} {counts['exact']:>5} {counts['refused']:>7} "
            f"{counts['different']:>9} {counts['failed']:>6}")
