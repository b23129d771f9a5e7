"""SQL result time columns at the sink: TIMESTAMP leaves plain, TIMESTAMP_LTZ in the session zone."""
import asyncio
import datetime

import pyarrow as pa
import pytest

from runtime.connectors.base import ConnectorContext, SinkWriter
from runtime.connectors.result_types import (RESULT_SCHEMA, RESULT_TIMES, ResultTypesWriter, conform_times, conform_types,
                                             with_result_types)
from runtime.timezones import parse_zone, resolve

UTC = datetime.timezone.utc
NOON = datetime.datetime(2024, 1, 1, 12, 0, 0, 100_000, tzinfo=UTC)


def bundle():
    times = pa.array([NOON, None], pa.timestamp("us", tz="UTC"))
    return pa.table({"ts": times, "lt": times, "n": [1, 2]})


def test_a_timestamp_keeps_its_digits_without_a_zone_and_an_instant_shows_in_the_session_zone():
    out = conform_times(bundle(), {"ts": None, "lt": "Asia/Shanghai"})
    assert out.schema.field("ts").type == pa.timestamp("us") and out.schema.field("n").type == pa.int64()
    ts, lt = out.column("ts").to_pylist(), out.column("lt").to_pylist()
    assert ts == [datetime.datetime(2024, 1, 1, 12, 0, 0, 100_000), None] and ts[0].tzinfo is None
    assert lt[0] == NOON and lt[0].utcoffset() == datetime.timedelta(hours=8) and lt[0].hour == 20


def test_columns_that_are_absent_or_not_times_are_left_alone():
    table = pa.table({"x": ["2024-01-01"]})
    assert conform_times(table, {"x": None, "gone": None}) is table


class Recorder(SinkWriter):
    def __init__(self, ctx):
        super().__init__(ctx)
        self.written, self.calls = [], []

    async def write(self, table):
        self.written.append(table)

    def commit(self, checkpoint_id):
        self.calls.append(("commit", checkpoint_id))


def context(params):
    return ConnectorContext("op", "Sink", 0, 1, params, None, lambda m: None, "job", "attempt", "streaming",
                            None, True)


def test_a_sql_sink_writer_is_wrapped_only_when_its_params_name_time_columns():
    plain = Recorder(context({"connector": "collect"}))
    assert with_result_types(plain) is plain
    wrapped = with_result_types(Recorder(context({"connector": "collect", RESULT_TIMES: {"ts": None}})))
    assert isinstance(wrapped, ResultTypesWriter)
    asyncio.run(wrapped.write(bundle()))
    wrapped.commit(3)
    assert wrapped.writer.written[0].schema.field("ts").type == pa.timestamp("us")
    assert wrapped.writer.calls == [("commit", 3)]


def test_bundles_take_the_declared_integer_decimal_and_null_types():
    import decimal

    from runtime.ddl import arrow_schema

    schema = arrow_schema("n BIGINT, d DECIMAL(38,2), s STRING, x DOUBLE")
    table = pa.table({"n": pa.array([1], pa.int32()), "d": pa.array([decimal.Decimal("1.5")], pa.decimal128(10, 1)),
                      "s": pa.array([None], pa.null()), "x": pa.array([2], pa.int64())})
    out = conform_types(table, schema)
    assert out.schema.field("n").type == pa.int64() and out.schema.field("d").type == pa.decimal128(38, 2)
    assert out.schema.field("s").type == pa.string() and out.column("d").to_pylist() == [decimal.Decimal("1.50")]
    assert out.schema.field("x").type == pa.int64(), "a column of another kind is not silently converted"
    wrapped = with_result_types(Recorder(context({"connector": "collect", RESULT_SCHEMA: "n BIGINT"})))
    asyncio.run(wrapped.write(table))
    assert wrapped.writer.written[0].schema.field("n").type == pa.int64()


@pytest.mark.parametrize("given, read", [("UTC", "UTC"), ("Europe/Berlin", "Europe/Berlin"), ("GMT+08:00", "+08:00"),
                                         ("UTC-3", "-03:00"), ("default", "default")])
def test_session_zones_read_as_flink_writes_them(given, read):
    assert parse_zone(given) == read


@pytest.mark.parametrize("bad", ["Mars/Olympus", "GMT+25:00", "", 8])
def test_a_zone_that_does_not_read_says_what_is_expected(bad):
    with pytest.raises(ValueError, match="time zone id"):
        parse_zone(bad)


def test_default_is_the_machines_zone(monkeypatch):
    monkeypatch.setenv("TZ", "Europe/Paris")
    assert resolve("default") == "Europe/Paris" and resolve(None) == "Europe/Paris" and resolve("UTC") == "UTC"
