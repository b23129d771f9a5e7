"""``'connector' = 'postgres-cdc'`` with Flink CDC's option names: one PostgreSQL table's snapshot and changes as
a changelog (runtime.connectors.postgres_cdc.reader). The table must declare its ``PRIMARY KEY (...) NOT
ENFORCED``: the planner keeps each row's changes in order by hashing them by it.

When a statement reading the table is submitted, the server is asked what the job will need: the
credentials, ``wal_level = logical``, the table with the declared columns and REPLICA IDENTITY FULL, and
the slot not read by another process; each refusal names the table, the option or setting, and the cause.
"""
from __future__ import annotations

from runtime.connectors.postgres import Endpoint
from runtime.connectors.postgres_cdc import slots
from runtime.connectors.table_options import ConfigOption, TableFactory, TableOptionError, TableSpec, physical_schema

HOSTNAME = ConfigOption("hostname", str, description="the PostgreSQL server")
PORT = ConfigOption("port", int, 5432)
USERNAME = ConfigOption("username", str)
PASSWORD = ConfigOption("password", str)
DATABASE = ConfigOption("database-name", str)
SCHEMA = ConfigOption("schema-name", str, description="the table's schema, e.g. public")
TABLE = ConfigOption("table-name", str)
SLOT = ConfigOption("slot.name", str, description="the logical replication slot this table is read through")
PLUGIN = ConfigOption("decoding.plugin.name", ("pgoutput", "wal2json"), "pgoutput")
STARTUP = ConfigOption("scan.startup.mode", ("initial", "latest-offset"), "initial")


def cdc_params(where: str, hostname: str, port: int, username: str, password: str | None, database: str,
               schema: str, table: str, slot: str, plugin: str = "pgoutput", startup: str = "initial",
               columns: list[str] | None = None, ddl: str | None = None) -> dict:
    """The source's params (SQL and DataStream alike)."""
    if not slot or not slot.replace("_", "").isalnum() or slot.lower() != slot:
        raise TableOptionError(f"{where}: option 'slot.name' must be lower-case letters, digits and '_' (PostgreSQL's "
                               f"rule for replication slots), got {slot!r}")
    return {"connector": "postgres-cdc", "where": where, "hostname": hostname, "port": port, "user": username,
            "password": password, "database": database, "schema_name": schema, "table_name": table, "slot": slot,
            "plugin": plugin, "startup": startup, "publication": f"{slot}_publication", "columns": columns or [],
            "schema": ddl}


class PostgresCdcTableFactory(TableFactory):
    """Flink CDC's postgres-cdc options into the change data capture source's params."""
    identifier = "postgres-cdc"
    required = (HOSTNAME, USERNAME, PASSWORD, DATABASE, SCHEMA, TABLE, SLOT)
    optional = (PORT, PLUGIN, STARTUP)
    changelog_source = True

    def check(self, table: TableSpec) -> None:
        """Flink CDC's options, a readable slot name, and the primary key the changelog is ordered by."""
        super().check(table)
        if not table.primary_key:
            raise TableOptionError(f"table {table.name!r}: a postgres-cdc table needs PRIMARY KEY (...) NOT ENFORCED "
                                   "(each row's changes are kept in order by it)")
        self.source_params(table, "streaming")

    def source_params(self, table: TableSpec, runtime_mode: str) -> dict:
        get = self.get
        return cdc_params(f"table {table.name!r}", get(table, HOSTNAME), get(table, PORT), get(table, USERNAME),
                          get(table, PASSWORD), get(table, DATABASE), get(table, SCHEMA), get(table, TABLE),
                          get(table, SLOT), get(table, PLUGIN), get(table, STARTUP), [c.name for c in table.physical],
                          physical_schema(table))

    def check_reachable(self, table: TableSpec, role: str) -> None:
        """The server answers, has wal_level logical and the table (columns, REPLICA IDENTITY FULL), and nobody
        else reads the slot."""
        params = self.source_params(table, "streaming")
        endpoint = Endpoint(params["hostname"], params["port"], params["database"], params["user"],
                            params["password"], params["where"], "hostname")
        with slots.session_connect(endpoint) as conn:
            slots.check_server(conn, endpoint, params["schema_name"], params["table_name"], params["columns"])
            slots.refuse_slot_in_use(conn, endpoint, params["slot"])
