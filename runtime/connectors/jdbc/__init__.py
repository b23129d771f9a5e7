"""The jdbc connector (PostgreSQL): a bounded scan, an append or upsert sink exactly-once with checkpoints, and
lookups for processing-time lookup joins; its SQL table factory and its DataStream builders."""
from runtime.connectors.base import Connector
from runtime.connectors.jdbc.datastream import JdbcConnectionOptions, JdbcExecutionOptions, JdbcSink, JdbcSource
from runtime.connectors.jdbc.factory import JdbcTableFactory
from runtime.connectors.jdbc.lookup import JdbcLookup
from runtime.connectors.jdbc.scan import JdbcScanReader
from runtime.connectors.jdbc.sink import JdbcSinkWriter

CONNECTOR = Connector("jdbc", reader=JdbcScanReader, writer=JdbcSinkWriter, table=JdbcTableFactory(),
                      lookup=JdbcLookup)

__all__ = ["CONNECTOR", "JdbcConnectionOptions", "JdbcExecutionOptions", "JdbcSink", "JdbcSource"]
