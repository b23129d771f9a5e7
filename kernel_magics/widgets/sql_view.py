"""SqlJobView: the live view of a SQL query in the three result modes of Flink's SQL client.

``table`` shows the materialised result, updated in place (retractions applied); ``changelog`` appends
every row with its kind in an ``op`` column (+I/-U/+U/-D); ``tableau`` appends rows to a bordered text
table as the SQL client prints them. ``-o VAR`` is always the final materialised table. The rest (header,
task/checkpoint/failover views, the reader thread) is JobView's.
"""
from __future__ import annotations

import html

import ipywidgets
import pyarrow as pa

from runtime.changelog import OP_COLUMN, SHORT, materialize, rows_of
from runtime.sql.display import tableau
from runtime.views.charts import ChartSpec
from runtime.views.results import replace_rows

from kernel_magics.widgets.job_view import JobView

MODES = ("table", "changelog", "tableau")


class SqlJobView(JobView):
    keeps_tables = False  # -o is the materialised changelog

    def __init__(self, session, job, name: str, max_rows: int, output_var: str | None, mode: str,
                 columns: list[str], statement: str, chart: ChartSpec | None = None):
        super().__init__(session, job, name, max_rows, output_var, chart=chart)
        self.mode = mode
        self.columns = columns
        self.statement = statement
        self.changelog_rows: list = []
        self.text = ipywidgets.HTML()
        statement_html = f"<pre style='font-size:11px;margin:2px 0'>{html.escape(statement)}</pre>"
        children = [self.header, ipywidgets.HTML(statement_html)]
        children += [self.text] if mode == "tableau" else []
        self.widget.children = children + [self.bokeh.widget]

    def _queue(self, table: pa.Table) -> None:
        with self._lock:
            self.changelog_rows += rows_of(table)
            self.rows_total += table.num_rows
            self._pending.append(table)
        self.session.updater.poke()

    def materialized(self) -> list:
        with self._lock:
            rows = list(self.changelog_rows)
        return materialize(rows)

    def dataframe(self):
        import pandas as pd

        return pd.DataFrame([r.as_dict() for r in self.materialized()], columns=self.columns)

    def _draw(self, pending: list[pa.Table]) -> None:
        """The results drawn for the result mode, from every change so far (``pending`` is in them)."""
        if self.chart is not None:  # the chart follows the materialised result: an updated row moves its point
            self.chart.append(_arrow(self.columns, [tuple(r) for r in self.materialized()]))
        if self.mode == "table":
            rows = self.materialized()
            replace_rows(self.results, _arrow(self.columns, [tuple(r) for r in rows]))
            return
        with self._lock:
            rows = self.changelog_rows[-self.results.max_rows:]
        if self.mode == "changelog":
            data = [(SHORT[r.get_row_kind().value], *r) for r in rows]
            replace_rows(self.results, _arrow(["op", *self.columns], data))
        else:
            self.text.value = f"<pre style='font-size:12px'>{html.escape(tableau(self.columns, rows, changelog=True))}</pre>"

    def copy_results(self) -> tuple[pa.Table | None, str]:
        if self.mode == "tableau":
            with self._lock:
                rows = self.changelog_rows[-self.results.max_rows:]
            return None, tableau(self.columns, rows, changelog=True)
        return self.results.tail, ""

    def _copy_extra(self) -> dict:
        return {"statement": self.statement}

    def rows_shown(self) -> list[dict]:
        """What the results table shows now (for tests and for a reader of the notebook)."""
        return self.results.rows()


def _arrow(columns: list[str], rows: list[tuple]) -> pa.Table:
    if not rows:
        return pa.table({c: pa.array([], pa.string()) for c in columns})
    values = list(zip(*rows))
    return pa.table({c: pa.array(list(v)) for c, v in zip(columns, values)})


__all__ = ["SqlJobView", "MODES", "OP_COLUMN"]
