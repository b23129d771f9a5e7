"""print (rows to the TaskManager's stdout, Flink's ``print()``) and blackhole (discard, for benchmarks).

Both are SQL connectors too: ``'connector' = 'print'`` (``print-identifier``) and ``'connector' =
'blackhole'``; both take every change of an updating query, as Flink's do.
"""
from __future__ import annotations

import sys

from runtime.changelog import rows_of
from runtime.connectors.base import Connector, SinkWriter
from runtime.connectors.table_options import (ALL_CHANGES, BOOLEAN, ConfigOption, TableFactory, TableSpec,
                                              UnsupportedTableOption)


def print_params(prefix: str = "") -> dict:
    return {"connector": "print", "prefix": prefix}


def blackhole_params() -> dict:
    return {"connector": "blackhole"}


class PrintWriter(SinkWriter):
    async def write(self, table) -> None:
        tag = self.ctx.params.get("prefix") or ""
        lead = f"{tag}{':' if tag else ''}{self.ctx.subtask_index + 1}> "
        if self.ctx.params.get("changelog"):  # SQL's print table: Flink's "+I[a, b]" lines
            for row in rows_of(table):
                sys.stdout.write(f"{lead}{row.get_row_kind().short_string()}[{', '.join(str(v) for v in row)}]\n")
            sys.stdout.flush()
            return
        for row in table.to_pylist():
            sys.stdout.write(lead + ", ".join(str(v) for v in row.values()) + "\n")
        sys.stdout.flush()


class BlackholeWriter(SinkWriter):
    async def write(self, table) -> None:
        return None


PRINT_IDENTIFIER = ConfigOption("print-identifier", str, "", "a prefix for every printed line")
STANDARD_ERROR = ConfigOption("standard-error", BOOLEAN, False, "print to stderr (not supported here)")


class PrintTableFactory(TableFactory):
    """``'connector' = 'print'``: Flink's ``+I[a, b]`` lines on the TaskManagers' standard output."""
    identifier = "print"
    optional = (PRINT_IDENTIFIER, STANDARD_ERROR)

    def check(self, table: TableSpec) -> None:
        """Flink's options; printing to standard error is refused by name."""
        super().check(table)
        if table.options.get("standard-error", "false") != "false":
            raise UnsupportedTableOption(f"table {table.name!r}: print with 'standard-error' is not supported")

    def sink_changelog(self, table: TableSpec) -> str:
        return ALL_CHANGES

    def sink_params(self, table: TableSpec) -> dict:
        return {"connector": "print", "prefix": self.get(table, PRINT_IDENTIFIER), "changelog": True}


class BlackholeTableFactory(TableFactory):
    """``'connector' = 'blackhole'``: rows are discarded (benchmarks)."""
    identifier = "blackhole"

    def sink_changelog(self, table: TableSpec) -> str:
        return ALL_CHANGES

    def sink_params(self, table: TableSpec) -> dict:
        return blackhole_params()


PRINT = Connector("print", writer=PrintWriter, table=PrintTableFactory())
BLACKHOLE = Connector("blackhole", writer=BlackholeWriter, table=BlackholeTableFactory())
