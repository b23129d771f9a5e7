"""Property tests (hypothesis) of the parsers that read what others send: the wire codec, DDL schemas,
configuration values, and REST request bodies. Whatever the input, each either reads it or refuses it
with its own error naming the problem; nothing else escapes (no TypeError, KeyError, RecursionError).
"""
from __future__ import annotations

import json
import string

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from runtime import config as cfg
from runtime.codec import WireError, decode, encode, from_plain
from runtime.ddl import DDLError, arrow_schema
from runtime.jobmanager.rest import messages as m
from runtime.jobmanager.rest.base import MAX_JSON_DEPTH, parse_json
from runtime.jobmanager.rest.fields import BodyError
from runtime.jobmanager.rest.fields import decode as decode_body
from runtime.jobmanager.rest.fields import encode as encode_body
from runtime.messages import Heartbeat, SlotStatus, TaskMetrics, TriggerCheckpoint

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20)
message_types = st.sampled_from(["Heartbeat", "TriggerCheckpoint", "TaskMetrics", "SlotStatus", "Envelope",
                                 "NoSuchMessage", "JobGraph"])


# -- the wire codec --------------------------------------------------------------------------
@SETTINGS
@given(st.one_of(st.text(), st.binary()))
def test_codec_decode_reads_or_refuses_any_text(raw):
    try:
        decode(raw)
    except WireError:
        pass


@SETTINGS
@given(message_types, st.dictionaries(st.sampled_from(["tm_id", "job_id", "attempt_id", "checkpoint_id", "timestamp",
                                                       "slot_report", "index", "records_in", "watermark", "sent_to",
                                                       "target", "stop", "drain", "body", "operators"]),
                                      json_values, max_size=8))
def test_codec_builds_a_message_or_names_what_does_not_fit(kind, fields):
    try:
        from_plain({"type": kind, **fields})
    except WireError as err:
        assert str(err)


@SETTINGS
@given(st.builds(TriggerCheckpoint, job_id=st.text(string.hexdigits, min_size=1), attempt_id=st.text(min_size=1),
                 checkpoint_id=st.integers(0, 2**62), timestamp=st.floats(0, 2e9), is_savepoint=st.booleans(),
                 target=st.text(), stop=st.booleans(), drain=st.booleans()),
       st.builds(TaskMetrics, job_id=st.text(), attempt_id=st.text(), records_in=st.integers(0, 2**62),
                 watermark=st.none() | st.floats(-1e12, 1e12), sent_to=st.dictionaries(st.text(), st.integers())),
       st.builds(Heartbeat, tm_id=st.text(), slot_report=st.lists(st.builds(SlotStatus, index=st.integers(0, 64)),
                                                                     max_size=3)))
def test_codec_round_trips_messages(trigger, metrics, heartbeat):
    for message in (trigger, metrics, heartbeat):
        assert decode(encode(message), type(message)) == message


# -- DDL --------------------------------------------------------------------------------------
ddl_words = st.sampled_from(["user", "n", "ts", "BIGINT", "INT", "STRING", "DOUBLE", "TIMESTAMP", "DECIMAL",
                             "ARRAY", "ROW", "MAP", "NOT", "NULL", "(", ")", "<", ">", ",", "3", "`x y`", "--", ":"])


@SETTINGS
@given(st.one_of(st.text(max_size=60), st.lists(ddl_words, max_size=14).map(" ".join)))
def test_ddl_parses_or_says_why(ddl):
    try:
        schema = arrow_schema(ddl)
    except DDLError as err:
        assert "schema" in str(err)
    else:
        assert isinstance(schema, pa.Schema) and len(schema) > 0


@SETTINGS
@given(st.lists(st.tuples(st.text(string.ascii_lowercase, min_size=1, max_size=6),
                          st.sampled_from(["BIGINT", "INT", "STRING", "DOUBLE", "BOOLEAN", "TIMESTAMP"])),
                min_size=1, max_size=5, unique_by=lambda c: c[0]))
def test_ddl_reads_back_every_declared_column(columns):
    schema = arrow_schema(", ".join(f"{name} {kind}" for name, kind in columns))
    assert schema.names == [name for name, _ in columns]


# -- configuration ----------------------------------------------------------------------------
@SETTINGS
@given(st.sampled_from(sorted(cfg.OPTIONS)), json_values)
def test_config_reads_a_value_or_names_the_key(key, value):
    try:
        cfg.Configuration({key: value})
    except cfg.ConfigError as err:
        assert key in str(err)


@SETTINGS
@given(st.text(max_size=30), st.text(max_size=30))
def test_unknown_config_keys_and_dynamic_properties_are_refused_by_name(key, value):
    if key in cfg.OPTIONS or key.startswith(cfg.SPARK_PREFIX):  # any spark.* key is Spark's, passed on as it is
        return
    with pytest.raises(cfg.ConfigError):
        cfg.Configuration({key: value})
    try:
        cfg.parse_dynamic_properties([f"{key}={value}", key])
    except cfg.ConfigError as err:
        assert str(err)


@SETTINGS
@given(st.floats(0, 10**7, allow_nan=False))
def test_durations_format_and_parse_back_to_the_millisecond(seconds):
    text = cfg.format_duration(seconds)
    assert cfg.parse_duration(text) == pytest.approx(round(seconds * 1000) / 1000, abs=1e-6)
    assert cfg.format_duration(cfg.parse_duration(text)) == text


# -- REST request bodies ----------------------------------------------------------------------
body_types = st.sampled_from([m.SavepointTriggerRequestBody, m.StopWithSavepointRequestBody,
                              m.CheckpointTriggerRequestBody, m.SavepointDisposalRequest, m.JobSubmitRequestBody,
                              m.PushRowsRequestBody])


@SETTINGS
@given(body_types, st.one_of(st.binary(max_size=200), json_values.map(lambda v: json.dumps(v).encode())))
def test_request_bodies_decode_or_get_a_400_message(cls, raw):
    try:
        body = decode_body(cls, parse_json(raw))
    except BodyError as err:
        assert str(err)
    else:
        assert isinstance(encode_body(body), dict)


@pytest.mark.parametrize("depth", [MAX_JSON_DEPTH + 1, 5_000, 200_000])
def test_deeply_nested_bodies_are_refused_not_a_recursion_error(depth):
    with pytest.raises(BodyError, match="nests deeper"):
        parse_json(b"[" * depth + b"]" * depth)
    assert parse_json(b"[" * MAX_JSON_DEPTH + b"]" * MAX_JSON_DEPTH) is not None
