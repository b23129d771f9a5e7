"""Logical decoding messages into changes, from messages PostgreSQL 15 sent for a table of (id INT, v TEXT) with
REPLICA IDENTITY FULL: pgoutput's binary protocol and wal2json's JSON give the same events; a table without
its old rows in the log is refused naming the fix; the postgres-cdc options are checked as Flink CDC's."""
from __future__ import annotations

import pytest

from runtime.api.environment import StreamExecutionEnvironment
from runtime.table import StreamTableEnvironment
from runtime.changelog import DELETE, INSERT, UPDATE_AFTER, UPDATE_BEFORE
from runtime.connectors.postgres_cdc.decoding import (Begin, Change, Commit, DecodingError, PgOutputDecoder,
                                                      Wal2JsonDecoder)
from runtime.connectors.postgres_cdc.replication import lsn_int, lsn_text
from runtime.sql.errors import SqlValidationError, UnsupportedSqlError

RELATION = (b"R\x00\x00@\x01public\x00orders\x00f\x00\x02\x01id\x00\x00\x00\x00\x17\xff\xff\xff\xff\x00v\x00\x00\x00"
            b"\x00\x19\xff\xff\xff\xff")
BEGIN = b"B\x00\x00\x00\x00\x01\x92T\xd8\x00\x03\x04O6\x9fg\xa3\x00\x00\x02\xd9"
INSERT_1 = b"I\x00\x00@\x01N\x00\x02t\x00\x00\x00\x011t\x00\x00\x00\x01a"
UPDATE_1 = b"U\x00\x00@\x01O\x00\x02t\x00\x00\x00\x011t\x00\x00\x00\x01aN\x00\x02t\x00\x00\x00\x011t\x00\x00\x00\x01c"
DELETE_1 = b"D\x00\x00@\x01O\x00\x02t\x00\x00\x00\x011n"
COMMIT = b"C\x00\x00\x00\x00\x00\x01\x92T\xd8\x00\x00\x00\x00\x01\x92U\x08\x00\x03\x04O6\x9fg\xa3"
EVENTS = [Begin(), Change(INSERT, {"id": "1", "v": "a"}), Change(UPDATE_BEFORE, {"id": "1", "v": "a"}),
          Change(UPDATE_AFTER, {"id": "1", "v": "c"}), Change(DELETE, {"id": "1", "v": None}), Commit(lsn_int("0/1925508"))]


def test_pgoutput_messages_become_begin_changes_and_the_commit_with_its_end():
    decoder = PgOutputDecoder()
    assert decoder.decode(RELATION, 0) == []
    events = [e for m in (BEGIN, INSERT_1, UPDATE_1, DELETE_1, COMMIT) for e in decoder.decode(m, 0)]
    assert events == EVENTS
    assert lsn_text(events[-1].end_lsn) == "0/1925508"


def test_wal2json_documents_become_the_same_events():
    decoder = Wal2JsonDecoder()
    docs = [b'{"action":"B"}', b'{"action":"I","schema":"public","table":"orders","columns":[{"name":"id","value":1},'
            b'{"name":"v","value":"a"}]}',
            b'{"action":"U","schema":"public","table":"orders","columns":[{"name":"id","value":1},{"name":"v",'
            b'"value":"c"}],"identity":[{"name":"id","value":1},{"name":"v","value":"a"}]}',
            b'{"action":"D","schema":"public","table":"orders","identity":[{"name":"id","value":1},'
            b'{"name":"v","value":null}]}', b'{"action":"C"}']
    events = [e for d in docs[:-1] for e in decoder.decode(d, 0)] + decoder.decode(docs[-1], lsn_int("0/1925508"))
    assert events == EVENTS
    big = decoder.decode(b'{"action":"I","schema":"s","table":"t","columns":[{"name":"n","value":12345678901234567.25},'
                         b'{"name":"b","value":true}]}', 0)
    assert big == [Change(INSERT, {"n": "12345678901234567.25", "b": "true"})], "numbers stay exact, as text"


def test_updates_and_deletes_without_old_rows_are_refused_naming_the_fix():
    decoder = PgOutputDecoder()
    decoder.decode(RELATION, 0)
    key_only = b"D\x00\x00@\x01K\x00\x02t\x00\x00\x00\x011n"
    with pytest.raises(DecodingError, match=r"ALTER TABLE public.orders REPLICA IDENTITY FULL"):
        decoder.decode(key_only, 0)
    with pytest.raises(DecodingError, match="REPLICA IDENTITY FULL"):
        Wal2JsonDecoder().decode(b'{"action":"D","schema":"public","table":"orders"}', 0)


CDC = ("'connector' = 'postgres-cdc', 'hostname' = 'h', 'username' = 'u', 'password' = 'p', 'database-name' = 'd', "
       "'schema-name' = 'public', 'table-name' = 'orders'")


@pytest.mark.parametrize("ddl, words", [
    (f"(id INT, PRIMARY KEY (id) NOT ENFORCED) WITH ({CDC})", "needs a 'slot.name' option"),
    (f"(id INT) WITH ({CDC}, 'slot.name' = 's')", "needs PRIMARY KEY"),
    (f"(id INT, PRIMARY KEY (id) NOT ENFORCED) WITH ({CDC}, 'slot.name' = 'My-Slot')", "lower-case letters"),
    (f"(id INT, PRIMARY KEY (id) NOT ENFORCED) WITH ({CDC}, 'slot.name' = 's', 'decoding.plugin.name' = 'decoderbufs')",
     "must be one of pgoutput, wal2json, got 'decoderbufs'"),
    (f"(id INT, PRIMARY KEY (id) NOT ENFORCED) WITH ({CDC}, 'slot.name' = 's', 'scan.startup.mode' = 'timestamp')",
     "must be one of initial, latest-offset"),
])
def test_postgres_cdc_options_are_checked_as_flink_cdc_checks_them(ddl, words):
    t_env = StreamTableEnvironment.create(StreamExecutionEnvironment())
    with pytest.raises(SqlValidationError, match=words):
        t_env.execute_sql(f"CREATE TABLE orders {ddl}")


def test_a_cdc_table_plans_as_a_changelog_read_once_and_hashed_by_its_key():
    t_env = StreamTableEnvironment.create(StreamExecutionEnvironment())
    t_env.execute_sql(f"CREATE TABLE orders (id INT, customer INT, PRIMARY KEY (id) NOT ENFORCED) WITH ({CDC}, "
                      "'slot.name' = 's')")
    text = t_env.explain_sql("SELECT customer, COUNT(*) FROM orders GROUP BY customer")
    assert "Source: orders' x1" in text and "hash(id)" in text and "hash(customer)" in text
    assert "local_aggregate" not in text, "a changelog input is aggregated without the insert-only pre-aggregation"


def test_a_cdc_table_is_refused_in_batch_mode_as_unbounded():
    t_env = StreamTableEnvironment.create(StreamExecutionEnvironment())
    t_env.execute_sql(f"CREATE TABLE orders (id INT, PRIMARY KEY (id) NOT ENFORCED) WITH ({CDC}, 'slot.name' = 's')")
    t_env.execute_sql("SET 'execution.runtime-mode' = 'batch'")
    with pytest.raises(UnsupportedSqlError, match=r"unbounded table 'orders' \(postgres-cdc\) in batch mode"):
        t_env.explain_sql("SELECT * FROM orders")
