"""SQL results in the types the query declares, applied to every bundle a SQL sink writes.

Bundles reach a sink from Spark plans and from the stateful operators, and one subtask's bundle can type a
column differently from another's (an INT where the other has a BIGINT, a NULL-typed column when every value of
the bundle was NULL), which a reader of all of them (the collect sink's client, a Parquet file) cannot merge.
The SQL planner puts the result's schema (Spark DDL) into the sink's params under :data:`RESULT_SCHEMA`, and
each bundle's NULL-typed and integer or decimal columns are cast to it.

Time columns follow Flink's types too. Spark carries each timestamp as an instant in its UTC session. A
column that the query types TIMESTAMP (without time zone) holds its wall-clock value as that UTC instant, so it
leaves as a plain timestamp with the same digits (Python: a naive ``datetime``, pandas: ``datetime64``); a
TIMESTAMP_LTZ column is an instant and leaves in the session time zone (``table.local-time-zone``). The
planner puts ``{column: None | zone}`` under :data:`RESULT_TIMES`; collect, files and print then see values as
PyFlink gives them.
"""
from __future__ import annotations

import pyarrow as pa

from runtime.connectors.base import SinkWriter

RESULT_SCHEMA = "result_schema"
RESULT_TIMES = "result_times"


def conform_types(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """``table`` with NULL-typed columns, and integer or decimal columns of another width, cast to ``schema``'s."""
    for field in schema:
        if field.name not in table.column_names:
            continue
        column = table.column(field.name)
        kind = column.type
        if kind == field.type or not (pa.types.is_null(kind) or _same_family(kind, field.type)):
            continue
        table = table.set_column(table.column_names.index(field.name), field.name, column.cast(field.type))
    return table


def _same_family(kind: pa.DataType, wanted: pa.DataType) -> bool:
    return (pa.types.is_integer(kind) and pa.types.is_integer(wanted)) or \
        (pa.types.is_decimal(kind) and pa.types.is_decimal(wanted))


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


class ResultTypesWriter(SinkWriter):
    """A sink's writer whose bundles are conformed to the result's types first; everything else is its own."""

    def __init__(self, writer: SinkWriter, schema: pa.Schema | None, zones: dict[str, str | None]):
        super().__init__(writer.ctx)
        self.writer, self.schema, self.zones = writer, schema, zones

    async def write(self, table: pa.Table) -> None:
        if self.schema is not None:
            table = conform_types(table, self.schema)
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


def with_result_types(writer: SinkWriter) -> SinkWriter:
    """``writer`` itself, or wrapped in a ResultTypesWriter when its params carry a SQL result's types."""
    from runtime.ddl import arrow_schema

    params = writer.ctx.params
    ddl, zones = params.get(RESULT_SCHEMA), params.get(RESULT_TIMES) or {}
    if not ddl and not zones:
        return writer
    return ResultTypesWriter(writer, arrow_schema(ddl) if ddl else None, zones)
