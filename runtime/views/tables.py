"""Bokeh DataTables of the live views: how one is built from a short column list, and how the page is
made to show new values in it."""
from __future__ import annotations

from bokeh.models import ColumnDataSource, DataTable, DateFormatter, NumberFormatter, TableColumn


# Formats by name; each table gets its own formatter models (a Bokeh model lives in one document only).
FORMATS = {"count": (NumberFormatter, "0,0"), "rate": (NumberFormatter, "0,0.0"), "percent": (NumberFormatter, "0%"),
            "time": (DateFormatter, "%H:%M:%S"), "bytes": (NumberFormatter, "0.0 b"), "seconds": (NumberFormatter, "0.000")}


def redraw(table: DataTable) -> None:
    """Make the page redraw a table whose rows changed but not their number.

    BokehJS updates a DataTable's grid when its CDSView changes (its indices do when the row count
    does), so new values in the same number of rows stay unseen. Touching the view's tags updates the
    grid in place; touching the table model itself would rebuild the whole grid, which costs the
    browser tens of milliseconds of layout per table and redraw."""
    table.view.tags = [(table.view.tags[0] if table.view.tags else 0) + 1]


def table_of(source: ColumnDataSource, columns: list[tuple], height: int = 180) -> DataTable:
    """A DataTable from (field, title[, format name]) tuples."""
    def column_of(field, title, fmt=None):
        extra = {"formatter": FORMATS[fmt][0](format=FORMATS[fmt][1])} if fmt else {}
        return TableColumn(field=field, title=title, **extra)
    return DataTable(source=source, columns=[column_of(*c) for c in columns], height=height, index_position=None,
                     sizing_mode="stretch_width")
