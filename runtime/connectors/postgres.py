"""PostgreSQL as the jdbc and postgres-cdc connectors reach it: where the server is, connections whose
failures name the table, the option and the server's words, the catalog questions both connectors ask,
and rows moved in and out with COPY as CSV, so they cross between Arrow and the server without a
Python step per row.

psycopg (the ``postgres`` extra) is imported when a connection is first needed: a TaskManager that
runs no such job does not load it, and one that lacks it says which extra to install.
"""
from __future__ import annotations

import io
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl

import pyarrow as pa
import pyarrow.csv as pacsv

from runtime.errors import ConnectorError

EXTRA = "flinkbench[postgres]"
DEFAULT_PORT = 5432
CONNECT_TIMEOUT_S = 10
_JDBC_URL = re.compile(r"jdbc:postgresql://(?P<host>\[[^\]]+\]|[^:/?]+)(?::(?P<port>\d+))?/(?P<db>[^?]+)"
                       r"(?:\?(?P<query>.*))?$")
JDBC_PROPERTIES = {"sslmode": "sslmode", "connectTimeout": "connect_timeout", "ApplicationName": "application_name"}


class PostgresError(ConnectorError):
    """PostgreSQL refused or could not be reached; the message names the table, the option and the cause."""


def psycopg() -> Any:
    """The psycopg module; PostgresError naming the extra to install when this Python lacks it."""
    try:
        import psycopg as module
    except ImportError:
        raise PostgresError("the jdbc and postgres-cdc connectors need the PostgreSQL client psycopg, which this "
                            f"Python lacks: pip install '{EXTRA}' (on every TaskManager and where SQL is planned)") \
            from None
    return module


@dataclass(frozen=True)
class Endpoint:
    """A PostgreSQL database and the credentials to reach it, with the words errors use: ``where`` names the
    table (``table 'orders'``), ``address_option`` the option that gave the address (url, or hostname)."""
    host: str
    port: int
    database: str
    user: str | None
    password: str | None
    where: str
    address_option: str = "url"
    extra: dict[str, str] = field(default_factory=dict)

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}/{self.database}"

    def conninfo(self, **more: str) -> str:
        """psycopg's connection string for this endpoint (``replication='database'`` for a replication one)."""
        from psycopg.conninfo import make_conninfo

        params = {"host": self.host.strip("[]"), "port": str(self.port), "dbname": self.database,
                  "connect_timeout": str(CONNECT_TIMEOUT_S), **self.extra, **more}
        if self.user is not None:
            params["user"] = self.user
        if self.password is not None:
            params["password"] = self.password
        return make_conninfo(**params)


def endpoint_from_jdbc_url(url: str, user: str | None, password: str | None, where: str) -> Endpoint:
    """The endpoint of ``jdbc:postgresql://host[:port]/database[?properties]``; PostgresError naming the option
    for any other URL (only PostgreSQL's driver is at hand)."""
    match = _JDBC_URL.match(url or "")
    if match is None:
        raise PostgresError(f"{where}: option 'url' must be a PostgreSQL JDBC URL like "
                            f"jdbc:postgresql://host:5432/database, got {url!r}")
    query = dict(parse_qsl(match.group("query") or ""))
    extra = {JDBC_PROPERTIES[k]: v for k, v in query.items() if k in JDBC_PROPERTIES}
    return Endpoint(match.group("host"), int(match.group("port") or DEFAULT_PORT), match.group("db"),
                    user if user is not None else query.get("user"),
                    password if password is not None else query.get("password"), where, "url", extra)


def connect(endpoint: Endpoint, autocommit: bool = True, **more: str):
    """A psycopg connection; PostgresError naming the table, the option and the server's words when the server
    cannot be reached or refuses the credentials."""
    pg = psycopg()
    try:
        return pg.connect(endpoint.conninfo(**more), autocommit=autocommit)
    except pg.OperationalError as err:
        raise PostgresError(describe_connect_error(endpoint, err)) from None


def describe_connect_error(endpoint: Endpoint, err: BaseException) -> str:
    """Why a connection failed, in the table's and the options' words."""
    text = server_words(err)
    lower = text.lower()
    if "password authentication failed" in lower or "no password supplied" in lower:
        return (f"{endpoint.where}: PostgreSQL at {endpoint.address} refused user {endpoint.user!r}: password "
                "authentication failed (options 'username' and 'password')")
    if "database" in lower and "does not exist" in lower:
        return f"{endpoint.where}: {text} at {endpoint.host}:{endpoint.port} (option {endpoint.address_option!r})"
    return (f"{endpoint.where}: cannot reach PostgreSQL at {endpoint.host}:{endpoint.port} "
            f"(option {endpoint.address_option!r}): {text}")


def server_words(err: BaseException) -> str:
    """The server's (or libpq's) message, without psycopg's framing: ``FATAL:  x`` -> ``x``."""
    lines = [line.strip() for line in str(err).splitlines() if line.strip()]
    text = " ".join(line if line.endswith((".", ":", "?", "!")) or i == len(lines) - 1 else line + "."
                    for i, line in enumerate(lines))
    text = re.sub(r"^connection failed: ", "", text)
    text = re.sub(r'connection to server at "[^"]*"(?: \([^)]*\))?, port \d+ failed: ', "", text)
    text = re.sub(r"\b(?:FATAL|ERROR):\s+", "", text)
    return text.strip() or type(err).__name__


def split_name(name: str, default_schema: str = "public") -> tuple[str, str]:
    """``schema.table`` or ``table`` as (schema, table)."""
    schema, _, table = name.rpartition(".")
    return (schema or default_schema).strip('"'), table.strip('"')


def identifier(*parts: str):
    """A safely quoted SQL identifier (``"schema"."table"``)."""
    return psycopg().sql.Identifier(*parts)


def table_columns(conn, schema: str, table: str) -> dict[str, str] | None:
    """{column: PostgreSQL type} of ``schema.table`` in order, or None when there is no such table."""
    rows = conn.execute("SELECT a.attname, format_type(a.atttypid, a.atttypmod) FROM pg_attribute a "
                        "JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace "
                        "WHERE n.nspname = %s AND c.relname = %s AND a.attnum > 0 AND NOT a.attisdropped "
                        "ORDER BY a.attnum", (schema, table)).fetchall()
    return {name: type_ for name, type_ in rows} or None


def unique_keys(conn, schema: str, table: str) -> list[set[str]]:
    """The column sets of ``schema.table``'s primary key and unique indexes (what ON CONFLICT can use)."""
    rows = conn.execute("SELECT array_agg(a.attname::text) FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid "
                        "JOIN pg_namespace n ON n.oid = c.relnamespace "
                        "JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = ANY(i.indkey) "
                        "WHERE n.nspname = %s AND c.relname = %s AND i.indisunique AND i.indpred IS NULL "
                        "GROUP BY i.indexrelid", (schema, table)).fetchall()
    return [set(cols) for (cols,) in rows]


def missing_columns(where: str, schema: str, table: str, found: dict[str, str] | None, wanted: list[str]) -> None:
    """PostgresError when ``schema.table`` does not exist or lacks a declared column."""
    if found is None:
        raise PostgresError(f"{where}: PostgreSQL has no table {schema}.{table} (options 'table-name' or "
                            f"'schema-name'/'table-name')")
    absent = [c for c in wanted if c not in found]
    if absent:
        raise PostgresError(f"{where}: the PostgreSQL table {schema}.{table} has no column(s) {absent}; it has "
                            f"{list(found)}")


def copy_out(cursor, query, columns: list[str]) -> pa.Table:
    """The rows of ``query`` (a psycopg SQL object) as an Arrow table of text columns named ``columns``: COPY as
    CSV, parsed by Arrow (NULL stays null, an empty string stays empty)."""
    sql = psycopg().sql
    buffer = io.BytesIO()
    with cursor.copy(sql.SQL("COPY ({}) TO STDOUT (FORMAT csv)").format(query)) as copy:
        for chunk in copy:
            buffer.write(chunk)
    return read_csv(buffer.getvalue(), columns)


def read_csv(data: bytes, columns: list[str]) -> pa.Table:
    """PostgreSQL's CSV (no header) as text columns: unquoted empty is NULL, quoted empty an empty string."""
    if not data:
        return pa.table({c: pa.array([], pa.string()) for c in columns})
    return pacsv.read_csv(io.BytesIO(data), read_options=pacsv.ReadOptions(column_names=columns),
                          convert_options=pacsv.ConvertOptions(
                              column_types={c: pa.string() for c in columns}, strings_can_be_null=True,
                              quoted_strings_can_be_null=False))


def copy_in(cursor, target, columns: list[str], table: pa.Table) -> None:
    """``table``'s columns (in ``columns`` order) into ``target`` (a psycopg SQL object) with COPY FROM as CSV:
    every value quoted, NULL as nothing, so an empty string and NULL stay apart."""
    sql = psycopg().sql
    data = io.BytesIO()
    pacsv.write_csv(table.select(columns), data, write_options=pacsv.WriteOptions(
        include_header=False, quoting_style="all_valid"))
    statement = sql.SQL("COPY {} ({}) FROM STDIN (FORMAT csv)").format(
        target, sql.SQL(", ").join(sql.Identifier(c) for c in columns))
    with cursor.copy(statement) as copy:
        copy.write(data.getvalue())
