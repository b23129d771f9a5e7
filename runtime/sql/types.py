"""SQL types: Flink's names as written in DDL, the Spark type the runtime carries, and back.

Columns are typed by Spark DDL strings (``BIGINT``, ``DECIMAL(10,2)``, ``ARRAY<INT>``) because every
plan runs in Spark and runtime.ddl reads them into Arrow. Flink's TIMESTAMP(p) (without time zone) is
``TIMESTAMP`` and TIMESTAMP_LTZ(p) is ``TIMESTAMP_LTZ``: Spark carries both as instants in its UTC
session, so a TIMESTAMP's instant in UTC is its wall-clock value; the two part at the result's edge
(runtime.sql.results), where a TIMESTAMP becomes a plain datetime and a TIMESTAMP_LTZ an instant shown
in the session time zone, as PyFlink gives them. CHAR/VARCHAR become STRING, BYTES/VARBINARY BINARY.
"""
from __future__ import annotations

from sqlglot import exp

from runtime.sql.errors import UnsupportedSqlError

D = exp.DataType.Type
_SIMPLE = {
    D.BOOLEAN: "BOOLEAN", D.TINYINT: "TINYINT", D.SMALLINT: "SMALLINT", D.INT: "INT", D.BIGINT: "BIGINT",
    D.FLOAT: "FLOAT", D.DOUBLE: "DOUBLE", D.TEXT: "STRING", D.VARCHAR: "STRING", D.CHAR: "STRING",
    D.NCHAR: "STRING", D.NVARCHAR: "STRING", D.VARBINARY: "BINARY", D.BINARY: "BINARY", D.DATE: "DATE",
    # sqlglot reads Flink's (and Spark's) TIMESTAMP as TIMESTAMPTZ, TIMESTAMP_LTZ as TIMESTAMPLTZ
    D.TIMESTAMP: "TIMESTAMP", D.TIMESTAMPTZ: "TIMESTAMP", D.TIMESTAMPNTZ: "TIMESTAMP", D.TIMESTAMPLTZ: "TIMESTAMP_LTZ",
}
TIME_TYPES = ("TIMESTAMP", "TIMESTAMP_LTZ")  # the types a time attribute may have
_FLINK_NAMES = {"STRING": "STRING", "TIMESTAMP": "TIMESTAMP(3)", "TIMESTAMP_LTZ": "TIMESTAMP_LTZ(3)", "BINARY": "BYTES",
                "INT": "INT"}


def spark_type(dtype: exp.DataType) -> str:
    """The Spark DDL type of a parsed SQL type; UnsupportedSqlError for types the runtime cannot carry."""
    kind = dtype.this
    if kind in _SIMPLE:
        return _SIMPLE[kind]
    if kind == D.DECIMAL:
        params = [p.name for p in dtype.expressions]
        return f"DECIMAL({params[0] if params else 10},{params[1] if len(params) > 1 else 0})"
    if kind == D.ARRAY:
        return f"ARRAY<{spark_type(dtype.expressions[0])}>"
    if kind == D.MAP:
        return f"MAP<{spark_type(dtype.expressions[0])},{spark_type(dtype.expressions[1])}>"
    if kind == D.STRUCT:
        fields = ", ".join(f"`{f.name}`: {spark_type(f.args['kind'])}" for f in dtype.expressions)
        return f"STRUCT<{fields}>"
    raise UnsupportedSqlError(f"type {dtype.sql('spark')} is not supported")


def flink_type(spark: str) -> str:
    """How DESCRIBE shows a column's type (Flink's spelling where it differs from Spark's)."""
    return _FLINK_NAMES.get(spark, spark)


def parse_type(text: str) -> exp.DataType:
    """A Flink SQL type name (``TIMESTAMP(3)``, ``DECIMAL(10, 2)``) as a sqlglot DataType."""
    from runtime.sql.dialect import Flink

    return exp.DataType.build(text, dialect=Flink)


def arrow_to_spark(arrow_type) -> str:
    """The Spark DDL type of an Arrow type (tables made from DataStreams and pandas frames)."""
    import pyarrow as pa

    checks = [(pa.types.is_boolean, "BOOLEAN"), (pa.types.is_int8, "TINYINT"), (pa.types.is_int16, "SMALLINT"),
              (pa.types.is_int32, "INT"), (pa.types.is_int64, "BIGINT"), (pa.types.is_float32, "FLOAT"),
              (pa.types.is_floating, "DOUBLE"), (pa.types.is_string, "STRING"), (pa.types.is_large_string, "STRING"),
              (pa.types.is_binary, "BINARY"), (pa.types.is_date, "DATE"), (pa.types.is_timestamp, "TIMESTAMP")]
    for check, name in checks:
        if check(arrow_type):
            return name
    if pa.types.is_decimal(arrow_type):
        return f"DECIMAL({arrow_type.precision},{arrow_type.scale})"
    if pa.types.is_list(arrow_type):
        return f"ARRAY<{arrow_to_spark(arrow_type.value_type)}>"
    raise UnsupportedSqlError(f"a column of Arrow type {arrow_type} cannot be used in SQL")
