"""Time columns of SQL results as Flink's types say, applied to every bundle a SQL sink writes.

Spark carries each timestamp as an instant in its UTC session. A column that the query types
TIMESTAMP (without time zone) holds its wall-clock value as that UTC instant, so it leaves as a plain
timestamp with the same digits (Python: a naive ``datetime``, pandas: ``datetime64``); a TIMESTAMP_LTZ
column is an instant and leaves in the session time zone (``table.local-time-zone``). The SQL planner
puts ``{column: None | zone}`` into the sink's params under :data:`RESULT_TIMES`; collect, files and
print then see values as PyFlink gives them.
"""
from __future__ import annotations

import pyarrow as pa

from runtime.connectors.base import SinkWriter

RESULT_TIMES = "result_times"


def conform_times(table: pa.Table, zones: dict[str, str | None]) -> pa.Table:
    """``table`` with each named timestamp column plain (zone None) or in its zone; other columns as they are."""
    for name, zone in zones.items():
        if name not in table.column_names:
            continue
        column = table.column(name)
        if not pa.types.is_timestamp(column.type) or column.type.tz == zone:
            continue
        utc = column.cast(pa.timestamp(column.type.unit, tz="UTC")) if column.type.tz is None else column
        table = table.set_column(table.column_names.index(name), name,
                                 utc.cast(pa.timestamp(column.type.unit, tz=zone)))
    return table


class ResultTimesWriter(SinkWriter):
    """A sink's writer whose bundles get :func:`conform_times` first; everything else is the writer's own."""

    def __init__(self, writer: SinkWriter, zones: dict[str, str | None]):
        super().__init__(writer.ctx)
        self.writer, self.zones = writer, zones

    async def write(self, table: pa.Table) -> None:
        await self.writer.write(conform_times(table, self.zones))

    def prepare_commit(self, checkpoint_id: int):
        return self.writer.prepare_commit(checkpoint_id)

    def commit(self, checkpoint_id: int) -> None:
        self.writer.commit(checkpoint_id)

    def abort(self, checkpoint_id: int) -> None:
        self.writer.abort(checkpoint_id)

    def restore(self, states, checkpoint_id) -> None:
        self.writer.restore(states, checkpoint_id)

    async def close(self) -> None:
        await self.writer.close()


def with_result_times(writer: SinkWriter) -> SinkWriter:
    """``writer`` itself, or wrapped in a ResultTimesWriter when its params name result time columns."""
    zones = writer.ctx.params.get(RESULT_TIMES)
    return ResultTimesWriter(writer, zones) if zones else writer
