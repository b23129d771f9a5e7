"""The jdbc connector in the DataStream API, with PyFlink's builder names::

    connection = (JdbcConnectionOptions.JdbcConnectionOptionsBuilder()
                  .with_url("jdbc:postgresql://127.0.0.1:5432/shop").with_user_name("app").with_password("secret")
                  .build())
    stream.sink_to(JdbcSink.sink("totals", connection, JdbcExecutionOptions.builder().with_batch_size(500).build(),
                                 key_columns=["customer"], columns=["customer", "total"]))
    env.from_source(JdbcSource.source("orders", "id BIGINT, amount DOUBLE", connection,
                                      partition=("id", 4, 1, 20_000)))

The sink writes the stream's columns named by ``columns`` (all, by default), appending, or upserting by
``key_columns``, exactly once when the job checkpoints, as the SQL sink does; the source is the SQL
table's bounded scan.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from runtime.connectors.jdbc import options as o
from runtime.ddl import arrow_schema

_WHERE = "jdbc {} {!r}"


@dataclass(frozen=True)
class JdbcConnectionOptions:
    """Where the database is: PyFlink's JdbcConnectionOptions (url, driver, user name, password)."""
    url: str = ""
    driver_name: str = o.DRIVER.default
    user_name: str | None = None
    password: str | None = None

    class JdbcConnectionOptionsBuilder:
        """PyFlink's builder: ``with_url(...).with_user_name(...).with_password(...).build()``."""
        def __init__(self):
            self._options = JdbcConnectionOptions()

        def with_url(self, url: str):
            """The JDBC URL, jdbc:postgresql://host:port/database."""
            self._options = replace(self._options, url=url)
            return self

        def with_driver_name(self, name: str):
            """The driver class (only PostgreSQL's is at hand)."""
            self._options = replace(self._options, driver_name=name)
            return self

        def with_user_name(self, name: str):
            """The database user."""
            self._options = replace(self._options, user_name=name)
            return self

        def with_password(self, password: str):
            """The user's password."""
            self._options = replace(self._options, password=password)
            return self

        def build(self) -> JdbcConnectionOptions:
            """The options as given."""
            return self._options


@dataclass(frozen=True)
class JdbcExecutionOptions:
    """How the sink writes without checkpointing: rows per write, the longest wait, retries of a lost connection."""
    batch_size: int = o.FLUSH_MAX_ROWS.default
    batch_interval_ms: int = int(o.FLUSH_INTERVAL.default * 1000)
    max_retries: int = o.SINK_MAX_RETRIES.default

    @staticmethod
    def builder() -> _ExecutionBuilder:
        """PyFlink's builder: ``with_batch_size(n).with_batch_interval_ms(ms).with_max_retries(n).build()``."""
        return _ExecutionBuilder()

    @staticmethod
    def defaults() -> JdbcExecutionOptions:
        """Flink's defaults: 100 rows, 1 s, 3 retries."""
        return JdbcExecutionOptions()


class _ExecutionBuilder:
    def __init__(self):
        self._options = JdbcExecutionOptions()

    def with_batch_size(self, rows: int) -> _ExecutionBuilder:
        self._options = replace(self._options, batch_size=rows)
        return self

    def with_batch_interval_ms(self, ms: int) -> _ExecutionBuilder:
        self._options = replace(self._options, batch_interval_ms=ms)
        return self

    def with_max_retries(self, retries: int) -> _ExecutionBuilder:
        self._options = replace(self._options, max_retries=retries)
        return self

    def build(self) -> JdbcExecutionOptions:
        return self._options


def _connection(kind: str, table_name: str, connection: JdbcConnectionOptions) -> dict:
    return o.connection_params(_WHERE.format(kind, table_name), connection.url, table_name, connection.user_name,
                               connection.password, connection.driver_name)


class JdbcSink:
    """The jdbc sink for ``stream.sink_to(...)``."""

    @staticmethod
    def sink(table_name: str, connection: JdbcConnectionOptions, execution: JdbcExecutionOptions | None = None,
             key_columns: list[str] | None = None, columns: list[str] | None = None) -> dict:
        """Params of a sink into ``table_name`` ([schema.]name): append, or upsert by ``key_columns``; ``columns``
        are the stream's columns written (all of them when not given)."""
        execution = execution or JdbcExecutionOptions.defaults()
        params = _connection("sink", table_name, connection)
        params.update(key=list(key_columns or []), columns=list(columns) if columns else None,
                      max_rows=execution.batch_size, interval_s=execution.batch_interval_ms / 1000.0,
                      max_retries=execution.max_retries)
        return params


class JdbcSource:
    """The jdbc bounded scan for ``env.from_source(...)``."""

    @staticmethod
    def source(table_name: str, schema: str, connection: JdbcConnectionOptions,
               partition: tuple[str, int, int, int] | None = None, fetch_size: int = 0) -> dict:
        """Params of a scan of ``table_name``'s columns ``schema`` (DDL, e.g. 'id BIGINT, amount DOUBLE'), split by
        ``partition`` = (column, number of splits, lower bound, upper bound) when given."""
        params = _connection("source", table_name, connection)
        columns = arrow_schema(schema).names
        params.update(columns=columns, schema=schema, fetch_size=fetch_size,
                      partition=o.partition_params(params["where"], tuple(partition or (None,) * 4), columns))
        return params
