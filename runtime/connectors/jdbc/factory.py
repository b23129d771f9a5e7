"""``'connector' = 'jdbc'``: a PostgreSQL table read (a bounded scan split by a numeric column), written (append,
or upsert by the declared ``PRIMARY KEY (...) NOT ENFORCED``), or looked up (``JOIN t FOR SYSTEM_TIME AS OF
s.proc_time``).

The options are checked at CREATE TABLE; the database itself is asked when a statement that uses the table
is submitted (:meth:`JdbcTableFactory.check_reachable`), so a wrong password, an unreachable host, a missing
table or a key the table lacks is refused in the cell, before any task starts.
"""
from __future__ import annotations

from runtime.connectors.jdbc import options as o
from runtime.connectors.postgres import (PostgresError, connect, endpoint_from_jdbc_url, missing_columns,
                                         table_columns, unique_keys)
from runtime.connectors.table_options import (INSERT_ONLY, SINK_PARALLELISM, UPSERT, TableFactory, TableSpec,
                                              physical_schema)


class JdbcTableFactory(TableFactory):
    """Flink's JDBC table options into the params of the jdbc scan, sink and lookup."""
    identifier = "jdbc"
    required = o.REQUIRED
    optional = o.OPTIONAL
    lookup_source = True

    def check(self, table: TableSpec) -> None:
        """Flink's option rules: the partition options together, the two cache options together."""
        super().check(table)
        where = f"table {table.name!r}"
        o.partition_params(where, self._partition(table), [c.name for c in table.physical])
        o.cache_params(where, self.get(table, o.CACHE_MAX_ROWS), self.get(table, o.CACHE_TTL))
        o.connection_params(where, self.get(table, o.URL), self.get(table, o.TABLE_NAME), None, None)

    def _partition(self, table: TableSpec) -> tuple:
        return tuple(self.get(table, option) for option in o.PARTITION)

    def _connection(self, table: TableSpec) -> dict:
        params = o.connection_params(f"table {table.name!r}", self.get(table, o.URL), self.get(table, o.TABLE_NAME),
                                     self.get(table, o.USERNAME), self.get(table, o.PASSWORD), self.get(table, o.DRIVER))
        return {**params, "columns": [c.name for c in table.physical], "schema": physical_schema(table),
                "types": {c.name: c.type for c in table.physical}}

    def source_params(self, table: TableSpec, runtime_mode: str) -> dict:
        """A bounded scan: each subtask reads its share of the partition ranges through Spark's JDBC source."""
        params = self._connection(table)
        params["partition"] = o.partition_params(params["where"], self._partition(table), params["columns"])
        params["fetch_size"] = self.get(table, o.FETCH_SIZE)
        return params

    def sink_changelog(self, table: TableSpec) -> str:
        """With a primary key the sink upserts (and deletes); without one it only appends, as in Flink."""
        return UPSERT if table.primary_key else INSERT_ONLY

    def sink_params(self, table: TableSpec) -> dict:
        """Append, or upsert by the primary key; exactly-once when the job checkpoints."""
        params = self._connection(table)
        params.update(key=list(table.primary_key), max_rows=self.get(table, o.FLUSH_MAX_ROWS),
                      interval_s=self.get(table, o.FLUSH_INTERVAL), max_retries=self.get(table, o.SINK_MAX_RETRIES))
        if o.SINK_PARALLELISM.key in table.options:
            params[SINK_PARALLELISM] = self.get(table, o.SINK_PARALLELISM)
        return params

    def lookup_params(self, table: TableSpec) -> dict:
        """The lookup function's params: where the dimension table is, its columns, its cache and retries."""
        params = self._connection(table)
        params.update(o.cache_params(params["where"], self.get(table, o.CACHE_MAX_ROWS), self.get(table, o.CACHE_TTL),
                                     self.get(table, o.CACHE_MISSING_KEY)),
                      max_retries=self.get(table, o.LOOKUP_MAX_RETRIES))
        return params

    def check_reachable(self, table: TableSpec, role: str) -> None:
        """Ask the database, as the job will: the server answers, the credentials hold, the table has the declared
        columns, and a sink's primary key is a key of the table (its upserts need one); PostgresError naming the
        table, the option and the cause."""
        params = self._connection(table)
        endpoint = endpoint_from_jdbc_url(params["url"], params["user"], params["password"], params["where"])
        with connect(endpoint) as conn:
            schema, name = params["schema_name"], params["table_name"]
            found = table_columns(conn, schema, name)
            missing_columns(params["where"], schema, name, found, params["columns"])
            if role == "sink" and table.primary_key and set(table.primary_key) not in unique_keys(conn, schema, name):
                raise PostgresError(f"{params['where']}: the sink declares PRIMARY KEY ({', '.join(table.primary_key)})"
                                    f" but the PostgreSQL table {schema}.{name} has no primary key or unique index on "
                                    "exactly those columns, which its upserts need")
