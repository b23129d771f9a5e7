"""Flink SQL on the Flinkbench runtime: statements parsed with sqlglot, planned into JobGraphs.

parse (runtime.sql.statements, dialect) -> validate against the catalog (catalog) -> logical plan
(logical, converter) -> operators of a StreamExecutionEnvironment (translator) -> the same JobGraph
a DataStream program makes. ``EXPLAIN`` prints each stage (explain).
"""
from runtime.sql.errors import SqlError, SqlParseError, SqlValidationError, UnsupportedSqlError

__all__ = ["SqlError", "SqlParseError", "SqlValidationError", "UnsupportedSqlError"]
