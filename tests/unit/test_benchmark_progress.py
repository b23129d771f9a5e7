"""The benchmark's count of Structured Streaming's rows survives the query forgetting old progress reports."""
from __future__ import annotations

from tests.benchmarks.run_all import MicroBatchRows


class RollingQuery:
    """A query keeping its last ``keep`` progress reports, as Spark's recentProgress does."""

    def __init__(self, keep: int = 3):
        self.keep, self.reports, self.batches = keep, [], 0

    def batch(self, rows: int) -> None:
        self.reports = [*self.reports, {"batchId": self.batches, "numInputRows": rows}][-self.keep:]
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
