"""Every connector of the project, listed once: by the name operators give (``params["connector"]``) and
by the identifier SQL tables give (``'connector' = '...'``).

Registration is this explicit list: each connector module exports one ``CONNECTOR`` (a
runtime.connectors.base.Connector) and imports only the interface below it, so no module imports its
way back here. Adding a connector is its module and one line below.
"""
from __future__ import annotations

from runtime import errors
from runtime.connectors import collect, collection, datagen, files, jdbc, postgres_cdc, push, simple_sinks
from runtime.connectors.base import (PYTHON_CONNECTOR, Connector, ConnectorContext, ConnectorError, LookupFunction,
                                     SinkWriter, SourceReader)
from runtime.connectors.result_types import with_result_types
from runtime.connectors.table_options import TableFactory, TableSpec, TableOptionError, UnsupportedTableOption

CONNECTORS: tuple[Connector, ...] = (datagen.CONNECTOR, collection.CONNECTOR, files.CONNECTOR, push.CONNECTOR,
                                     collect.CONNECTOR, simple_sinks.PRINT, simple_sinks.BLACKHOLE, jdbc.CONNECTOR,
                                     postgres_cdc.CONNECTOR)
BY_NAME = {c.name: c for c in CONNECTORS}
TABLE_FACTORIES: dict[str, TableFactory] = {c.table.identifier: c.table for c in CONNECTORS if c.table is not None}


def table_factory(table: TableSpec) -> TableFactory:
    """The factory of the table's ``'connector'`` option; TableOptionError when it has none,
    UnsupportedTableOption when no connector here has that identifier."""
    name = table.options.get("connector")
    known = ", ".join(TABLE_FACTORIES)
    if name is None:
        raise TableOptionError(f"table {table.name!r} has no 'connector' option; one of {known}")
    if name not in TABLE_FACTORIES:
        raise UnsupportedTableOption(f"table {table.name!r}: connector {name!r} is not available here; one of {known}")
    return TABLE_FACTORIES[name]


def _connector_class(ctx: ConnectorContext, role: str) -> type:
    name = ctx.params.get("connector")
    if name == PYTHON_CONNECTOR:
        from runtime.jobgraph import unpack_udf

        try:
            return unpack_udf(ctx.params["class"])
        except errors.SubmissionError as err:
            raise ConnectorError(f"{role} '{ctx.operator_name}' ({ctx.params.get('class_name')}): {err}") from None
    found = BY_NAME.get(name) if isinstance(name, str) else None
    cls = None if found is None else found.reader if role == "source" else found.writer
    if cls is None:
        known = sorted(c.name for c in CONNECTORS if (c.reader if role == "source" else c.writer) is not None)
        raise ConnectorError(f"{role} '{ctx.operator_name}': unknown connector {name!r}, "
                             f"expected one of {known} or a {PYTHON_CONNECTOR!r} class")
    return cls


def source_reader(ctx: ConnectorContext) -> SourceReader:
    """The SourceReader an operator names (registered here, or shipped with the job)."""
    return _connector_class(ctx, "source")(ctx)


def sink_writer(ctx: ConnectorContext) -> SinkWriter:
    """The SinkWriter an operator names (registered here, or shipped with the job); a SQL sink's bundles are
    conformed to the result's types first (runtime.connectors.result_types)."""
    return with_result_types(_connector_class(ctx, "sink")(ctx))


def lookup_function(params: dict, keys: list[str]) -> LookupFunction:
    """The lookup function of the connector ``params`` name, for rows whose ``keys`` columns match."""
    found = BY_NAME.get(params.get("connector"))
    if found is None or found.lookup is None:
        known = sorted(c.name for c in CONNECTORS if c.lookup is not None)
        raise ConnectorError(f"connector {params.get('connector')!r} offers no lookups; these do: {known}")
    return found.lookup(params, keys)
