"""print (rows to the TaskManager's stdout, Flink's ``print()``) and blackhole (discard, for benchmarks)."""
from __future__ import annotations

import sys

from runtime.changelog import rows_of
from runtime.connectors.base import SinkWriter, sink


def print_params(prefix: str = "") -> dict:
    return {"connector": "print", "prefix": prefix}


def blackhole_params() -> dict:
    return {"connector": "blackhole"}


@sink("print")
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


@sink("blackhole")
class BlackholeWriter(SinkWriter):
    async def write(self, table) -> None:
        return None
