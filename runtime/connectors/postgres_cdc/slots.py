"""What the postgres-cdc source asks of and does to the server: the checks that make its errors precise (wal_level,
the table and its columns, its replica identity, a slot in use), the publication pgoutput reads, replication
slots created (with an exported snapshot for an exact handover), taken over or dropped, and the snapshot read.
"""
from __future__ import annotations

import time

import pyarrow as pa

from runtime.connectors.postgres import (Endpoint, PostgresError, connect, copy_out, identifier, missing_columns,
                                         psycopg, server_words, table_columns)
from runtime.connectors.postgres_cdc.replication import lsn_int

SESSION = "-c datestyle=ISO -c timezone=UTC -c extra_float_digits=3"  # values as text Spark reads back exactly


def session_connect(endpoint: Endpoint, **more: str):
    """A connection whose values come as ISO text in UTC."""
    return connect(endpoint, options=SESSION, **more)


def check_server(conn, endpoint: Endpoint, schema: str, table: str, columns: list[str]) -> None:
    """wal_level logical, the table with the declared columns, its replica identity FULL; PostgresError naming the
    table, the setting and what to do."""
    level = conn.execute("SHOW wal_level").fetchone()[0]
    if level != "logical":
        raise PostgresError(f"{endpoint.where}: PostgreSQL at {endpoint.host}:{endpoint.port} has wal_level = {level}; "
                            "change data capture needs wal_level = logical (postgresql.conf, then restart the server)")
    missing_columns(endpoint.where, schema, table, table_columns(conn, schema, table), columns)
    identity = conn.execute("SELECT c.relreplident FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                            "WHERE n.nspname = %s AND c.relname = %s", (schema, table)).fetchone()[0]
    if identity != "f":
        raise PostgresError(f"{endpoint.where}: the PostgreSQL table {schema}.{table} does not log its old rows "
                            f"(REPLICA IDENTITY {dict(d='DEFAULT', n='NOTHING', i='USING INDEX').get(identity, identity)}"
                            f"), which updates and deletes need: ALTER TABLE {schema}.{table} REPLICA IDENTITY FULL "
                            "(as Flink CDC asks)")


def slot_state(conn, slot: str) -> tuple[bool, int | None, int | None]:
    """(exists, the PID of the process reading it or None, its confirmed position or None)."""
    row = conn.execute("SELECT active_pid, confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = %s",
                       (slot,)).fetchone()
    if row is None:
        return False, None, None
    return True, row[0], lsn_int(row[1]) if row[1] else None


def refuse_slot_in_use(conn, endpoint: Endpoint, slot: str) -> None:
    """PostgresError when another process reads the slot now (another job, or a client)."""
    exists, pid, _ = slot_state(conn, slot)
    if exists and pid is not None:
        raise PostgresError(f"{endpoint.where}: replication slot {slot!r} is in use by another process (PID {pid}): "
                            "another job or client reads it; choose another 'slot.name' or stop that reader")


def wait_until_free(conn, endpoint: Endpoint, slot: str, timeout_s: float = 30.0) -> int | None:
    """The slot's confirmed position once no process reads it (a killed TaskManager's connection takes a moment
    to end); PostgresError when it is gone or still in use after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while True:
        exists, pid, confirmed = slot_state(conn, slot)
        if not exists:
            raise PostgresError(f"{endpoint.where}: replication slot {slot!r} no longer exists: the job cannot resume "
                                "from its checkpoint without losing changes; start it afresh (without the checkpoint)")
        if pid is None:
            return confirmed
        if time.monotonic() >= deadline:
            refuse_slot_in_use(conn, endpoint, slot)
        time.sleep(0.5)


def prepare_publication(conn, name: str, schema: str, table: str) -> None:
    """The publication pgoutput reads, holding exactly this table (made before the slot: a slot only sees
    publications older than itself)."""
    sql = psycopg().sql
    exists = conn.execute("SELECT 1 FROM pg_publication WHERE pubname = %s", (name,)).fetchone()
    verb = "ALTER PUBLICATION {} SET TABLE {}" if exists else "CREATE PUBLICATION {} FOR TABLE {}"
    conn.execute(sql.SQL(verb).format(sql.Identifier(name), identifier(schema, table)))


def drop_slot(conn, slot: str) -> None:
    """Drop a slot no process reads."""
    conn.execute("SELECT pg_drop_replication_slot(%s)", (slot,))


def create_slot(replication_conn, endpoint: Endpoint, slot: str, plugin: str, export: bool) -> tuple[int, str | None]:
    """CREATE_REPLICATION_SLOT on a replication connection: (its consistent point, the exported snapshot's name,
    valid until the connection's next command)."""
    mode = "EXPORT_SNAPSHOT" if export else "NOEXPORT_SNAPSHOT"
    try:
        row = replication_conn.execute(f'CREATE_REPLICATION_SLOT "{slot}" LOGICAL {plugin} {mode}').fetchone()
    except psycopg().Error as err:
        raise PostgresError(f"{endpoint.where}: cannot create replication slot {slot!r} with plugin {plugin!r} "
                            f"(options 'slot.name', 'decoding.plugin.name'): {server_words(err)}") from None
    return lsn_int(row[1]), row[2]


def read_snapshot(endpoint: Endpoint, snapshot: str, schema: str, table: str, columns: list[str]) -> pa.Table:
    """The table's rows as of the exported ``snapshot``, as text columns (COPY as CSV, read by Arrow)."""
    sql = psycopg().sql
    with session_connect(endpoint, autocommit=False) as conn:
        conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        conn.execute(sql.SQL("SET TRANSACTION SNAPSHOT {}").format(sql.Literal(snapshot)))
        query = sql.SQL("SELECT {} FROM {}").format(sql.SQL(", ").join(sql.Identifier(c) for c in columns),
                                                    identifier(schema, table))
        with conn.cursor() as cur:
            rows = copy_out(cur, query, columns)
        conn.rollback()
    return rows
