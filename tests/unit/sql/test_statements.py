"""Cutting scripts into statements, recognising them, and errors that name line and column."""
import pytest

from runtime.sql.errors import SqlParseError, UnsupportedSqlError
from runtime.sql.statements import parse_script

SCRIPT = """SET 'execution.runtime-mode' = 'batch';
-- a comment; with a semicolon
CREATE TABLE t (a INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) WITH ('connector' = 'datagen');
EXPLAIN SELECT a FROM t;
EXECUTE STATEMENT SET BEGIN
INSERT INTO s SELECT * FROM t;
INSERT INTO s2 SELECT 'a;b' FROM t;
END;
SHOW TABLES;
RESET;
DESCRIBE t
"""


def test_a_script_splits_into_its_statements_with_positions():
    statements = parse_script(SCRIPT)
    assert [s.kind for s in statements] == ["set", "create_table", "explain", "statement_set", "show", "reset",
                                            "describe"]
    assert statements[0].args == {"key": "execution.runtime-mode", "value": "batch"}
    assert statements[1].position() == (3, 1)
    assert statements[2].inner[0].kind == "query" and statements[2].inner[0].position() == (4, 9)
    assert [(s.kind, s.position()) for s in statements[3].inner] == [("insert", (6, 1)), ("insert", (7, 1))]
    assert statements[4].args["what"] == "TABLES" and statements[5].args["key"] is None


@pytest.mark.parametrize("text, error, where, words", [
    ("SELECT a FROM", SqlParseError, (1, 10), "table name"),
    ("SELECT a,\n  b FROM t WHERE\n", SqlParseError, (2, 12), "after WHERE"),
    ("SELECT a b c FROM t", SqlParseError, (1, 12), "unexpected 'c'"),
    ("SELEC a FROM t", SqlParseError, (1, 1), "unknown statement 'SELEC'"),
    ("SELECT 'abc", SqlParseError, (1, 8), "not closed"),
    ("SELECT (a FROM t", SqlParseError, (1, 11), "expecting )"),
    ("ALTER TABLE t RENAME TO x", UnsupportedSqlError, (1, 1), "ALTER statements are not supported"),
    ("SET 'a' 'b'", SqlParseError, (1, 1), "SET 'key' = 'value'"),
])
def test_errors_name_line_column_and_what_was_expected(text, error, where, words):
    with pytest.raises(error) as caught:
        parse_script(text)
    assert (caught.value.line, caught.value.column) == where
    assert words in str(caught.value)


def test_flink_syntax_that_spark_lacks_parses():
    statements = parse_script(
        "SELECT * FROM TABLE(SESSION(TABLE c PARTITION BY (u, v), DESCRIPTOR(ts), INTERVAL '5' SECONDS));"
        "SELECT * FROM TABLE(HOP(TABLE c, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND));"
        "CREATE TABLE x (a BYTES, r ROW<x INT>, PRIMARY KEY (a) NOT ENFORCED) WITH ('connector' = 'print')")
    assert [s.kind for s in statements] == ["query", "query", "create_table"]
    session = statements[0].ast.args["from_"].this.this.expressions[0]
    assert [c.name for c in session.expressions[0].args["partition_by"]] == ["u", "v"]
    assert session.expressions[2].args["unit"].name == "SECOND"
