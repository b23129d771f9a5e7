"""The Table API with PyFlink's names (pyflink.table): a thin front over the SQL layer (runtime.sql).

``StreamTableEnvironment.create(env)`` runs SQL statements and makes Tables on a DataStream
environment's catalog; results come back as a TableResult of Rows with their RowKinds.
"""
from runtime.changelog import Row, RowKind
from runtime.table.environment import StreamTableEnvironment, Table, TableConfig
from runtime.table.result import TableResult

__all__ = ["Row", "RowKind", "StreamTableEnvironment", "Table", "TableConfig", "TableResult"]
