"""How the benchmark compares the two engines fairly: which configurations each is tried in, which one is
its best, in what order the rounds run, and what the ratio of the two bests says over the rounds.

A configuration (:class:`Setup`) is one side's micro-batch size (Structured Streaming's rows per batch; our
bundle size, rows over all source subtasks) and the JVM options its Spark JVMs start with. Each side is swept
over the same sizes with its own JVM options, then tried at its best size with the other side's options, so
that both configurations of both are reported; each side's best of all that is what the rounds compare.
The rounds alternate which side goes first (ABBA), so that a machine whose speed drifts within the hour
favours neither. Pure: no process, no clock.
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass

FLINKBENCH = "flinkbench"
STRUCTURED_STREAMING = "structured_streaming"
SIDES = (FLINKBENCH, STRUCTURED_STREAMING)

# JVM profiles: Flinkbench's TaskManagers' own (taskmanager.spark.jvm-options, the class archive, their Spark
# settings) and Spark's defaults (no JVM option, no archive).
OURS_JVM = "flinkbench-jvm"
SPARK_JVM = "spark-defaults"
JVM_PROFILES = (OURS_JVM, SPARK_JVM)
DEFAULT_JVM = {FLINKBENCH: OURS_JVM, STRUCTURED_STREAMING: SPARK_JVM}

SWEEP_ROWS = (2_000_000, 5_000_000, 10_000_000, 20_000_000)


@dataclass(frozen=True)
class Setup:
    """One side in one configuration. ``rows_per_batch`` is over all the side's cores; None is our own
    adaptive bundle sizing (taskmanager.bundle.target-time), which Structured Streaming has no equivalent of."""
    side: str
    rows_per_batch: int | None
    jvm: str

    def __post_init__(self):
        if self.side not in SIDES:
            raise ValueError(f"unknown side {self.side!r}; known: {', '.join(SIDES)}")
        if self.jvm not in JVM_PROFILES:
            raise ValueError(f"unknown JVM profile {self.jvm!r}; known: {', '.join(JVM_PROFILES)}")
        if self.rows_per_batch is None and self.side != FLINKBENCH:
            raise ValueError("only Flinkbench sizes its bundles adaptively: give Structured Streaming a batch size")

    @property
    def label(self) -> str:
        size = "adaptive" if self.rows_per_batch is None else f"{self.rows_per_batch / 1e6:g} M"
        return f"{size}, {self.jvm}"

    def as_dict(self) -> dict:
        return {"side": self.side, "rows_per_batch": self.rows_per_batch, "jvm": self.jvm}

    @classmethod
    def from_dict(cls, data: dict) -> Setup:
        return cls(data["side"], data["rows_per_batch"], data["jvm"])


def sweep_plan(side: str, sizes: tuple[int, ...] | list[int] = SWEEP_ROWS) -> list[Setup]:
    """The sizes to try ``side`` at, with its own JVM profile; ours adds its adaptive sizing (the default)."""
    jvm = DEFAULT_JVM[side]
    plan = [Setup(side, size, jvm) for size in sizes]
    return [Setup(side, None, jvm), *plan] if side == FLINKBENCH else plan


def other_jvm(setup: Setup) -> Setup:
    """The same side and size with the other JVM profile."""
    (other,) = [p for p in JVM_PROFILES if p != setup.jvm]
    return Setup(setup.side, setup.rows_per_batch, other)


def best(measured: list[tuple[Setup, float | None]]) -> Setup:
    """The setup with the most rows per second (the first of equals; runs that failed, None, never win)."""
    done = [(rate, -i, setup) for i, (setup, rate) in enumerate(measured) if rate is not None]
    if not done:
        raise ValueError("no configuration was measured: nothing to call best")
    return max(done, key=lambda item: item[:2])[2]


def interleaved(rounds: int, sides: tuple[str, str] = SIDES) -> list[tuple[int, str]]:
    """(round, side) in the order to run them: AB, BA, AB ... so each side goes first as often as the other."""
    if rounds < 1:
        raise ValueError(f"rounds must be at least 1, got {rounds}")
    order = []
    for r in range(rounds):
        first, second = sides if r % 2 == 0 else sides[::-1]
        order += [(r, first), (r, second)]
    return order


def spread(values: list[float | None]) -> dict:
    """min, median and max of the values present (None where none is)."""
    present = [v for v in values if v is not None]
    if not present:
        return {"min": None, "median": None, "max": None}
    return {"min": min(present), "median": statistics.median(present), "max": max(present)}


def ratios(ours: list[float | None], theirs: list[float | None]) -> dict:
    """Ours over theirs, round by round, with their spread; a round where either side failed has None."""
    if len(ours) != len(theirs):
        raise ValueError(f"{len(ours)} rounds of ours against {len(theirs)} of theirs")
    per_round = [None if a is None or not b else round(a / b, 3) for a, b in zip(ours, theirs)]
    return {"per_round": per_round, **spread(per_round)}


def rows_per_cpu_second(rows: float, cpu_seconds: float | None) -> float | None:
    """Rows processed for each second of CPU all the side's processes used (None when none was measured)."""
    return None if not cpu_seconds or cpu_seconds <= 0 else rows / cpu_seconds


def capacity_loads(capacity: float, shares: tuple[float, ...]) -> list[tuple[float, float]]:
    """(share, rows/s) at each share of ``capacity``."""
    if capacity <= 0:
        raise ValueError(f"capacity must be positive, got {capacity}")
    return [(share, capacity * share) for share in shares]


def lowest_median(latencies: dict[str, dict]) -> str | None:
    """The key (a trigger) whose latency run has the lowest median; runs that failed or saw no window never win."""
    measured = [(run["median_s"], key) for key, run in latencies.items() if run.get("median_s") is not None]
    return min(measured)[1] if measured else None
