import pyarrow as pa
import pytest

from runtime.ddl import DDLError, arrow_schema


def test_ddl_column_lists_read_as_arrow_schemas():
    schema = arrow_schema("user BIGINT, `the name` VARCHAR(20) NOT NULL, amount: DECIMAL(12, 3), ok boolean, "
                          "at TIMESTAMP, tags ARRAY<STRING>, scores MAP<STRING, DOUBLE>, p STRUCT<x: INT, y FLOAT>")
    assert schema == pa.schema([
        ("user", pa.int64()), pa.field("the name", pa.string(), nullable=False), ("amount", pa.decimal128(12, 3)),
        ("ok", pa.bool_()), ("at", pa.timestamp("us", tz="UTC")), ("tags", pa.list_(pa.string())),
        ("scores", pa.map_(pa.string(), pa.float64())), ("p", pa.struct([("x", pa.int32()), ("y", pa.float32())]))])
    assert arrow_schema("d DECIMAL, e DECIMAL(5), t TIMESTAMP_NTZ").types == [
        pa.decimal128(10, 0), pa.decimal128(5, 0), pa.timestamp("us")]


@pytest.mark.parametrize("ddl,message", [
    ("", "a schema is a DDL string"),
    ("user", "expected a type, found the end"),
    ("user INT,", "expected a column name, found the end"),
    ("user BIGNUM", "expected a type .*found 'BIGNUM'"),
    ("a INT b INT", "expected ',' or the end, found 'b'"),
    ("a ARRAY<INT", "expected '>', found the end"),
    ("a DECIMAL(1, 2, 3)", "DECIMAL\\(precision\\[, scale\\]\\)"),
    ("a INT; b INT", "unexpected '; b INT'"),
    ("a INT, A INT, a BIGINT", "names column\\(s\\) \\['a'\\] more than once"),
])
def test_bad_ddl_is_refused_saying_what_was_expected(ddl, message):
    with pytest.raises(DDLError, match=message):
        arrow_schema(ddl)
