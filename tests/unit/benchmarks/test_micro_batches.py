"""The benchmark's count of Structured Streaming's rows: it survives the query forgetting old progress
reports, and its rate runs from one batch end to another."""
from __future__ import annotations

import pytest

from tests.benchmarks.micro_batches import MicroBatchRows, batch_end, rate_after, span_after


class RollingQuery:
    """A query keeping its last ``keep`` progress reports, as Spark's recentProgress does."""

    def __init__(self, keep: int = 3):
        self.keep, self.reports, self.batches = keep, [], 0

    def batch(self, rows: int) -> None:
        report = {"batchId": self.batches, "numInputRows": rows, "timestamp": "2026-11-26T17:00:00.000Z",
                  "durationMs": {"triggerExecution": 1000 * self.batches}}
        self.reports = [*self.reports, report][-self.keep:]
        self.batches += 1

    @property
    def recentProgress(self):  # noqa: N802 - Spark's name
        return list(self.reports)


def test_rows_of_batches_the_query_no_longer_reports_stay_counted():
    query = RollingQuery(keep=3)
    progress = MicroBatchRows(query, interval=3600)  # merged only when asked, not by its thread
    try:
        for rows in (10, 20, 30):
            query.batch(rows)
        assert progress.rows() == 60
        for rows in (40, 50, 60, 70):  # batches 0-3 fall out of the query's reports
            query.batch(rows)
            progress.rows()
        assert progress.rows() == 280
        assert progress.rows() == 280, "asking again counts no batch twice"
    finally:
        progress.close()


def test_a_batch_ends_at_its_trigger_start_plus_its_duration():
    report = {"timestamp": "2026-11-26T17:00:00.250Z", "durationMs": {"triggerExecution": 1500}}
    assert batch_end(report) == pytest.approx(1_795_712_401.75)


def test_the_rate_runs_from_the_last_batch_end_before_the_start_to_the_last_end():
    # batches of 20 s: a fixed 40 s window would hold one or two of them, depending on where it fell
    batches = [(10, 100.0), (40_000_000, 120.0), (40_000_000, 140.0), (60_000_000, 170.0)]
    assert rate_after(batches, 125.0) == pytest.approx(100_000_000 / 50.0)  # 140 and 170, from 120
    assert rate_after(batches, 170.0) is None, "no batch ended after the start yet"
    assert rate_after(batches, 99.0) is None, "no batch end before the start to time from"
    assert rate_after([(0, 100.0), *batches[1:]], 110.0) is None, "empty batches do not count as ends"


def test_the_span_gives_the_rows_and_both_ends_for_the_cpu_between_them():
    batches = [(10, 100.0), (40_000_000, 120.0), (40_000_000, 140.0), (60_000_000, 170.0)]
    span = span_after(batches, 125.0)
    assert (span.rows, span.start, span.end) == (100_000_000, 120.0, 170.0)
