"""The jdbc connector's lookup function: the rows of a PostgreSQL table whose key columns match a batch of
keys, for a processing-time lookup join (runtime.taskmanager.lookup_join_operator holds the cache).

One query per batch of keys (``JOIN unnest(keys) ON ...``); each column is cast in the query to the type
the table declares, so the values fit its Arrow schema. A lost connection is retried on a fresh one up to
``lookup.max-retries`` times; other errors name the table and the server's words.
"""
from __future__ import annotations

import re
import time

import pyarrow as pa

from runtime.connectors.postgres import PostgresError, connect, endpoint_from_jdbc_url, identifier, psycopg, \
    server_words
from runtime.ddl import arrow_schema

_CASTS = {"boolean": "boolean", "tinyint": "smallint", "smallint": "smallint", "int": "integer", "integer": "integer",
          "bigint": "bigint", "float": "real", "double": "double precision", "string": "text", "date": "date",
          "timestamp": "timestamp", "timestamp_ltz": "timestamptz", "timestamp_ntz": "timestamp"}


def postgres_type(ddl_type: str) -> str | None:
    """The PostgreSQL type a declared (Spark DDL) type is read as, or None to read the column as it is."""
    text = ddl_type.strip().lower()
    decimal = re.fullmatch(r"(?:decimal|numeric|dec)\s*\((\d+)\s*,\s*(\d+)\)", text)
    if decimal:
        return f"numeric({decimal.group(1)},{decimal.group(2)})"
    return _CASTS.get(re.sub(r"\(.*\)", "", text).strip())


class JdbcLookup:
    """Fetches the dimension rows matching batches of keys; one connection, kept while the task runs."""

    def __init__(self, params: dict, keys: list[str]):
        self.params, self.keys = params, keys
        self.schema = arrow_schema(params["schema"])
        self.endpoint = endpoint_from_jdbc_url(params["url"], params["user"], params["password"], params["where"])
        self._conn = None
        self._query = self._build_query()

    def _build_query(self):
        sql = psycopg().sql
        types = dict(zip(self.schema.names, (self.params["types"][c] for c in self.schema.names)))
        select = sql.SQL(", ").join(
            sql.SQL("t.{c}::{t}").format(c=sql.Identifier(c), t=sql.SQL(postgres_type(types[c])))
            if postgres_type(types[c]) else sql.SQL("t.{}").format(sql.Identifier(c)) for c in self.schema.names)
        arrays = sql.SQL(", ").join(sql.Placeholder() for _ in self.keys)
        names = sql.SQL(", ").join(sql.Identifier(f"k{i}") for i in range(len(self.keys)))
        on = sql.SQL(" AND ").join(sql.SQL("t.{} = u.{}").format(sql.Identifier(k), sql.Identifier(f"k{i}"))
                                   for i, k in enumerate(self.keys))
        return sql.SQL("SELECT {} FROM {} t JOIN unnest({}) AS u({}) ON {}").format(
            select, identifier(self.params["schema_name"], self.params["table_name"]), arrays, names, on)

    def lookup(self, keys: pa.Table) -> pa.Table:
        """Blocking: every row whose key columns equal one of ``keys``' rows (columns named as the table's keys)."""
        pg = psycopg()
        values = [keys[k].to_pylist() for k in self.keys]
        retries = int(self.params.get("max_retries", 3))
        for attempt in range(retries + 1):
            try:
                if self._conn is None or self._conn.closed:
                    self._conn = connect(self.endpoint)
                rows = self._conn.execute(self._query, values).fetchall()
                return pa.table([pa.array([r[i] for r in rows], f.type) for i, f in enumerate(self.schema)],
                                schema=self.schema)
            except (pg.OperationalError, PostgresError) as err:
                self._conn = None
                if attempt == retries:
                    raise PostgresError(f"{self.params['where']}: lookup failed after {retries} retries: "
                                        f"{server_words(err)} (option 'lookup.max-retries')") from None
                time.sleep(min(2.0 ** attempt, 10.0))
            except pg.Error as err:
                raise PostgresError(f"{self.params['where']}: lookup failed: {server_words(err)}") from None
        raise AssertionError("unreachable")
