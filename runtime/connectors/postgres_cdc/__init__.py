"""The postgres-cdc connector: one PostgreSQL table's snapshot, then its changes from a logical replication slot,
as a changelog; its SQL table factory (Flink CDC's options) and its DataStream builder."""
from __future__ import annotations

from runtime.connectors.base import Connector
from runtime.connectors.postgres_cdc.factory import PostgresCdcTableFactory, cdc_params
from runtime.connectors.postgres_cdc.reader import PostgresCdcReader
from runtime.ddl import arrow_schema


class PostgresCdcSource:
    """The DataStream source: ``env.from_source(PostgresCdcSource.source(...)).set_parallelism(1)`` gives the table's
    rows with their row kind in column ``__op`` (runtime.changelog: 0 +I, 1 -U, 2 +U, 3 -D)."""

    @staticmethod
    def source(hostname: str, database: str, schema: str, table: str, columns: str, username: str, password: str,
               slot_name: str, port: int = 5432, decoding_plugin: str = "pgoutput", startup_mode: str = "initial") -> dict:
        """Params of a change data capture source of ``schema.table``'s ``columns`` (DDL, e.g. 'id BIGINT, v STRING'),
        read through the replication slot ``slot_name``."""
        names = arrow_schema(columns).names
        return cdc_params(f"postgres-cdc source {schema}.{table}", hostname, port, username, password, database, schema,
                          table, slot_name, decoding_plugin, startup_mode, names, columns)


CONNECTOR = Connector("postgres-cdc", reader=PostgresCdcReader, table=PostgresCdcTableFactory())

__all__ = ["CONNECTOR", "PostgresCdcSource"]
