"""How many rows a task processes per bundle (one Spark action each): big enough to amortise the
action's fixed cost, small enough to keep latency and memory in bounds."""
from __future__ import annotations


def burst_rows(reader) -> int:
    """How far a rate-limited source may run ahead of its pace to make up for a stall."""
    if reader.max_burst_s is None or reader.rate is None:
        return 2**62
    return max(1, int(reader.max_burst_s * reader.rate))


def first_bundle_size(rate: float | None, target: float, lo: int, hi: int, due: int = 0) -> int:
    """A rate-limited source starts with what its rate brings in one target time: starting from ``lo``
    would take many bundles of mostly fixed cost to reach it, while its rows fall due all the same
    and pile up as a backlog that only the spare capacity drains. One that starts behind (``due`` rows
    already, as a source whose event time is the wall clock has after its job's deployment) takes them all
    at once, up to ``hi``: the first bundle's cost hardly grows with its rows, and the job's first windows
    wait for the watermark the last of them carries. Other sources start at ``lo``."""
    if rate is None:
        return lo
    return max(lo, min(hi, max(due, int(rate * target))))


def next_bundle_size(size: int, took: float, target: float, lo: int, hi: int, overhead: float = 0.0) -> int:
    """Size the next bundle to take about ``max(target, 2 * overhead)``.

    A Spark action has a fixed cost (``overhead``, the quickest bundle seen) that does not shrink with
    the bundle, so a bundle must take at least twice that to spend most of its time on rows. Only the
    time above the fixed cost grows with the rows, so that part is scaled: a bundle that took little
    more than the fixed cost may grow a lot. Growth is at most 4x and shrinking at most half per
    step, to follow changing input smoothly.
    """
    if took <= 0:
        return min(hi, size * 2)
    aim = max(target, 2 * overhead)
    per_rows = took - overhead  # the part of the bundle's time its rows took
    scaled = int(size * (aim - overhead) / per_rows) if per_rows > 0 else size * 4
    return max(lo, min(hi, size * 4, max(size // 2, scaled)))


def backpressured_bundle_size(size: int, rows: int, elapsed: float, target: float, lo: int) -> int:
    """Cap a backpressured source's next bundle at what its consumers took in one target time.

    A source waiting for credit sends rows only as fast as its consumers take them (``rows`` in
    ``elapsed`` seconds, the wait included). Its buffers are whole bundles, so bundles sized by the
    source's own speed would queue many seconds of the consumers' work ahead of a checkpoint barrier;
    capped, each queued buffer holds about a target time of it (Flink debloats its buffers for the
    same reason).
    """
    if elapsed <= 0 or rows <= 0:
        return size
    return max(lo, min(size, int(rows * target / elapsed)))


def wait_before_reading(due: int, lo: int, waited: float, max_wait: float, rate: float, first: bool = False) -> float:
    """Seconds a rate-limited source waits before it reads the ``due`` rows (0: read now): until they fill a
    bundle's floor (``lo``, taskmanager.bundle.min-rows), or until they have waited ``max_wait`` since its last
    read, and at least one row is due. Each bundle is one Spark action whose fixed cost does not shrink with its
    rows: a slow source reading rows as they fell due ran one action after another for a trickle, busy all the
    time (the job graph's "limits this job") and its JVM with it, for the same rows. Waiting is idle time, as
    Flink counts a source waiting for data.

    The ``first`` bundle is read as soon as a row is due: it is the one whose plan is new to the session (its
    code generated and compiled), and that work then overlaps the next rows' arrival instead of following it
    and delaying the first windows."""
    if due >= lo or (due > 0 and (first or waited >= max_wait)):
        return 0.0
    first_row = (1 - due) / rate
    return first_row if first else max(first_row, min((lo - due) / rate, max_wait - waited))
