"""CREATE TABLE into catalog entries: columns, computed columns, watermarks, keys, connector options."""
import pytest

from runtime.sql import connectors
from runtime.sql.catalog import Catalog, describe_rows
from runtime.sql.errors import SqlValidationError, UnsupportedSqlError
from runtime.sql.statements import parse_script
from runtime.sql.tables import table_def

CLICKS = """CREATE TABLE clicks (
  `user` BIGINT,
  url VARCHAR(20),
  amount DOUBLE,
  ts TIMESTAMP(3),
  doubled AS amount * 2,
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND,
  PRIMARY KEY (`user`) NOT ENFORCED
) WITH ('connector' = 'datagen', 'rows-per-second' = '100', 'number-of-rows' = '1000',
        'fields.user.min' = '1', 'fields.user.max' = '9', 'fields.url.length' = '8')"""


def make(text):
    stmt = parse_script(text)[0]
    return table_def(stmt.ast, stmt.text)


def test_create_table_reads_columns_watermark_key_and_options():
    table = make(CLICKS)
    assert [(c.name, c.type) for c in table.columns] == [("user", "BIGINT"), ("url", "STRING"), ("amount", "DOUBLE"),
                                                         ("ts", "TIMESTAMP"), ("doubled", "DOUBLE")]
    assert table.column("doubled").expr == "amount * 2"
    assert (table.watermark.column, table.watermark.delay_us) == ("ts", 5_000_000)
    assert table.primary_key == ["user"]
    params = connectors.source_params(table, "streaming")
    assert params["number_of_rows"] == 1000 and params["rows_per_second"] == 100.0
    assert params["fields"]["user"] == {"kind": "random", "min": 1, "max": 9}
    assert params["fields"]["url"]["length"] == 8
    assert "doubled" not in params["schema"]
    rows = describe_rows(table)
    assert rows[0]["key"] == "PRI(user)" and rows[3]["type"] == "TIMESTAMP(3) *ROWTIME*"
    assert rows[3]["watermark"] == "ts - INTERVAL '5' SECOND" and rows[4]["extras"] == "AS amount * 2"


def test_a_sequence_with_an_end_bounds_datagen_as_in_flink():
    table = make("CREATE TABLE s (id BIGINT) WITH ('connector' = 'datagen', 'fields.id.kind' = 'sequence', "
                 "'fields.id.start' = '1', 'fields.id.end' = '50')")
    assert connectors.source_params(table, "streaming")["number_of_rows"] == 50


def test_filesystem_tables_with_partitions_read_and_write():
    table = make("CREATE TABLE f (a INT, dt STRING) PARTITIONED BY (dt) WITH ('connector' = 'filesystem', "
                 "'path' = '/tmp/f', 'format' = 'csv')")
    source = connectors.source_params(table, "batch")
    assert source["schema"] == "`a` INT" and source["partition_columns"] == {"dt": "STRING"}
    assert connectors.sink_params(table) == {"connector": "files", "path": "/tmp/f", "format": "csv",
                                             "partition_by": ["dt"]}


@pytest.mark.parametrize("text, error, words", [
    ("CREATE TABLE t (a INT) WITH ('connector' = 'kafka')", UnsupportedSqlError, "connector 'kafka' is not available"),
    ("CREATE TABLE t (a INT) WITH ('connector' = 'datagen', 'rows-per-sec' = '1')", SqlValidationError,
     "unsupported option 'rows-per-sec'"),
    ("CREATE TABLE t (a INT) WITH ('connector' = 'datagen', 'fields.b.min' = '1')", SqlValidationError,
     "names no column 'b'"),
    ("CREATE TABLE t (a INT, WATERMARK FOR b AS b) WITH ('connector' = 'datagen')", SqlValidationError,
     "'b', which is not a column"),
    ("CREATE TABLE t (a INT, WATERMARK FOR a AS a) WITH ('connector' = 'datagen')", SqlValidationError,
     "must be a TIMESTAMP"),
    ("CREATE TABLE t (a INT, b AS c + 1) WITH ('connector' = 'datagen')", SqlValidationError, "unknown column 'c'"),
    ("CREATE TABLE t (a INT, a STRING) WITH ('connector' = 'datagen')", SqlValidationError, "more than once"),
    ("CREATE TABLE t (a INT) WITH ('connector' = 'filesystem', 'path' = '/x', 'format' = 'orc')", SqlValidationError,
     "'format' must be one of csv, json, parquet"),
    ("CREATE TABLE t (ts TIMESTAMP(3), WATERMARK FOR ts AS ts + INTERVAL '1' SECOND) WITH ('connector' = 'datagen')",
     UnsupportedSqlError, "watermark expression"),
])
def test_bad_tables_are_refused_naming_the_problem(text, error, words):
    with pytest.raises(error, match=words):
        make(text)


def test_the_catalog_refuses_duplicates_and_drops_by_kind():
    catalog = Catalog()
    catalog.add(make(CLICKS))
    with pytest.raises(SqlValidationError, match="already exists"):
        catalog.add(make(CLICKS))
    assert catalog.add(make(CLICKS), if_not_exists=True) is False
    with pytest.raises(SqlValidationError, match="is a table: use DROP TABLE"):
        catalog.drop("clicks", "VIEW")
    assert catalog.get("default_catalog.default_database.clicks") is not None
    catalog.drop("clicks", "TABLE")
    with pytest.raises(SqlValidationError, match="does not exist"):
        catalog.require("clicks")


@pytest.mark.parametrize("options, words", [
    ("'connector' = 'datagen', 'fields.a.min' = 'abc'", "option 'fields.a.min' must be an integer, got 'abc'"),
    ("'connector' = 'datagen', 'rows-per-second' = 'fast'", "option 'rows-per-second' must be a number, got 'fast'"),
    ("'connector' = 'datagen', 'fields.a.kind' = 'sequence', 'fields.a.end' = 'x'",
     "option 'fields.a.end' must be an integer, got 'x'"),
    ("'connector' = 'datagen', 'fields.ts.max-out-of-orderness' = 'a bit'",
     "option 'fields.ts.max-out-of-orderness' must be a duration such as '10 s' or '500 ms', got 'a bit'"),
    ("'connector' = 'filesystem', 'path' = '/x', 'format' = 'csv', 'source.monitor-interval' = 'often'",
     "option 'source.monitor-interval' must be a duration"),
])
def test_option_values_that_do_not_read_are_refused_naming_option_and_value(options, words):
    table = make(f"CREATE TABLE t (a INT, ts TIMESTAMP(3)) WITH ({options})")
    with pytest.raises(SqlValidationError) as err:
        connectors.source_params(table, "streaming")
    assert str(err.value).startswith(f"table 't': {words}")


def test_datagen_timestamps_start_now_and_follow_the_clock_unless_told_otherwise(monkeypatch):
    """Flink's datagen stamps rows with the time they are made; 'timestamp-start' keeps a fixed, replayable start."""
    import time

    monkeypatch.setattr(time, "time", lambda: 1_800_000_000.5)
    params = connectors.source_params(make(CLICKS), "streaming")
    assert (params["timestamp_start"], params["realtime"], params["timestamp_start_now"]) == (1_800_000_000.5, True, True)
    past = make(CLICKS.replace("'fields.url.length' = '8'", "'fields.ts.max-past' = '5 s'"))
    assert connectors.source_params(past, "streaming")["fields"]["ts"]["max_out_of_orderness"] == 5.0
    fixed = connectors.source_params(make(CLICKS.replace("'number-of-rows'", "'timestamp-start' = '1700000000', "
                                                         "'number-of-rows'")), "streaming")
    assert fixed["timestamp_start"] == 1_700_000_000.0 and "realtime" not in fixed and "timestamp_start_now" not in fixed
    rated = connectors.source_params(make(CLICKS.replace("'number-of-rows'", "'event-rate' = '10', 'number-of-rows'")),
                                     "streaming")
    assert rated["timestamp_start"] == 1_800_000_000.5 and "realtime" not in rated
