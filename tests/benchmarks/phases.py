"""Where a job's bundles spend their time, from the per-phase task metrics (REST ``phase_s`` and
``phase_count``, runtime.taskmanager.metrics.PHASES): a snapshot before and after a measurement, and
per task the milliseconds per entry of each phase and its share of the task's wall time."""
from __future__ import annotations


def snapshot(client, job_id: str) -> dict:
    """Per task name: (phase totals, phase counts, parallelism, pending records) as the REST API reports them."""
    out = {}
    for vertex in client.get(f"/jobs/{job_id}")["vertices"]:
        metrics = vertex.get("metrics") or {}
        out[vertex["name"]] = (dict(metrics.get("phase_s") or {}), dict(metrics.get("phase_count") or {}),
                               vertex["parallelism"], metrics.get("pending_records"))
    return out


def breakdown(before: dict, after: dict, seconds: float) -> dict:
    """Per task and phase between two snapshots: ms per entry and share (%) of the subtasks' wall time."""
    table: dict[str, dict[str, dict[str, float]]] = {}
    for name, (totals, counts, parallelism, _) in after.items():
        old_totals, old_counts = before.get(name, ({}, {}, 0, None))[:2]
        rows = {}
        for phase in sorted(totals):
            spent, entered = totals[phase] - old_totals.get(phase, 0.0), counts[phase] - old_counts.get(phase, 0)
            if entered > 0:
                rows[phase] = {"ms_each": round(1000 * spent / entered, 1), "count": entered,
                               "share_pct": round(100 * spent / (seconds * max(1, parallelism)), 1)}
        table[name] = rows
    return table


def show(title: str, table: dict) -> None:
    print(f"  where the time went ({title}): ms per entry x entries, % of the task's wall time", flush=True)
    for name, rows in table.items():
        cells = ", ".join(f"{phase} {r['ms_each']:g} ms x{r['count']} ({r['share_pct']:g} %)" for phase, r in rows.items())
        print(f"    {name[:60]}: {cells or '-'}", flush=True)
