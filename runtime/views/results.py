"""A live table of a job's latest results: a Bokeh DataTable holding the last ``max_rows`` rows.

Rows arrive as Arrow tables (what ``GET /jobs/<id>/results?format=arrow`` returns); only the last
``max_rows`` stay, so an endless job cannot fill the browser's memory. Each append replaces the
source's data with the new tail instead of ``ColumnDataSource.stream(..., rollover=N)``: in
JupyterLab (jupyter_bokeh 4.1, BokehJS 3.9) a table stops redrawing once rollover starts dropping
rows, and the tail is small (see also figures.redraw). Like every Bokeh model, :meth:`ResultsTable.append` must run on its
document's thread.
"""
from __future__ import annotations

import pyarrow as pa
from bokeh.models import ColumnDataSource, DataTable, DateFormatter, NumberFormatter, TableColumn

from runtime.views.tables import redraw

TIMESTAMP_FORMAT = "%Y-%m-%d %H:%M:%S"


def bokeh_columns(table: pa.Table) -> dict[str, list]:
    """Arrow columns as lists Bokeh can send: times as epoch milliseconds, decimals as floats,
    nested and binary values as text."""
    out: dict[str, list] = {}
    for name, col in zip(table.column_names, table.columns):
        kind = col.type
        if pa.types.is_timestamp(kind) or pa.types.is_date(kind):
            values = col.cast(pa.timestamp("ms", tz=getattr(kind, "tz", None))) if pa.types.is_date(kind) else col
            out[name] = [None if v is None else float(v) for v in values.cast(pa.timestamp("ms")).cast(pa.int64()).to_pylist()]
        elif pa.types.is_decimal(kind):
            out[name] = col.cast(pa.float64()).to_pylist()
        elif pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_boolean(kind) or pa.types.is_string(kind) \
                or pa.types.is_large_string(kind):
            out[name] = col.to_pylist()
        else:
            out[name] = [None if v is None else str(v) for v in col.to_pylist()]
    return out


def _formatter(kind: pa.DataType):
    if pa.types.is_timestamp(kind) or pa.types.is_date(kind):
        return DateFormatter(format=TIMESTAMP_FORMAT)
    if pa.types.is_integer(kind):
        return NumberFormatter(format="0")
    if pa.types.is_floating(kind) or pa.types.is_decimal(kind):
        return NumberFormatter(format="0.0[000]")
    return None


class ResultsTable:
    def __init__(self, max_rows: int = 100, height: int = 260):
        if max_rows < 1:
            raise ValueError(f"max_rows must be at least 1, got {max_rows}")
        self.max_rows = max_rows
        self.source = ColumnDataSource(data={}, name="results-source")
        self.table = DataTable(source=self.source, columns=[], height=height, sizing_mode="stretch_width",
                               index_position=None, name="results")
        self.schema: pa.Schema | None = None
        self._tail: pa.Table | None = None
        self.rows_seen = 0

    def append(self, table: pa.Table) -> None:
        """Add rows at the bottom; keep only the last ``max_rows``."""
        if table.num_rows == 0 and self.schema is not None:
            return
        if self.schema is None or table.schema.names != self.schema.names:
            self._reset(table.schema)
            self._tail = table.slice(0, 0)
        self.rows_seen += table.num_rows
        if table.num_rows:
            tail = pa.concat_tables([self._tail, table], promote_options="default")
            self._tail = tail.slice(max(0, tail.num_rows - self.max_rows))
            self.source.data = bokeh_columns(self._tail)
            redraw(self.table)

    def _reset(self, schema: pa.Schema) -> None:
        self.schema = schema
        self.table.columns = [TableColumn(field=f.name, title=f.name,
                                          **({"formatter": fmt} if (fmt := _formatter(f.type)) else {}))
                              for f in schema]
        self.source.data = {f.name: [] for f in schema}

    @property
    def tail(self) -> pa.Table | None:
        """The rows shown, as Arrow (None before the first table)."""
        return self._tail

    def rows(self) -> list[dict]:
        """The rows now in the table, oldest first (what a reader of the notebook sees)."""
        data = self.source.data
        names = list(data)
        return [dict(zip(names, values)) for values in zip(*(data[n] for n in names))] if names else []


def replace_rows(results: ResultsTable, table: pa.Table) -> None:
    """Show exactly ``table`` (its last ``max_rows`` rows): a materialised result redrawn in place."""
    if results.schema is None or table.schema.names != results.schema.names:
        results._reset(table.schema)
    tail = table.slice(max(0, table.num_rows - results.max_rows))
    results._tail = tail
    results.rows_seen = table.num_rows
    results.source.data = bokeh_columns(tail) if tail.num_rows else {n: [] for n in table.schema.names}
    redraw(results.table)
