"""Logical decoding messages into changes: PostgreSQL's built-in ``pgoutput`` (protocol version 1) and the
``wal2json`` plugin (format version 2), both to the same events.

An event is a :class:`Begin`, a :class:`Change` (its row kind and the table's column values as PostgreSQL's
text, None for NULL) or a :class:`Commit` carrying the LSN just past the transaction, from which a stream
resumes without it. An update becomes -U (the old row) and +U (the new), a delete -D with the old row: both
need the old values, which PostgreSQL sends only for tables with REPLICA IDENTITY FULL (Flink CDC asks the
same); a message without them is a DecodingError naming the table.
"""
from __future__ import annotations

import json
import struct
from dataclasses import dataclass

from runtime.changelog import DELETE, INSERT, UPDATE_AFTER, UPDATE_BEFORE
from runtime.errors import ConnectorError


class DecodingError(ConnectorError):
    """A decoding message this source cannot turn into changes; the message names the table and why."""


@dataclass(frozen=True)
class Begin:
    """A transaction starts."""


@dataclass(frozen=True)
class Commit:
    """A transaction ended; ``end_lsn`` is where a stream resumes after it."""
    end_lsn: int


@dataclass(frozen=True)
class Change:
    """One row of the changelog: its kind (runtime.changelog's) and its values by column name, as text."""
    kind: int
    values: dict[str, str | None]


FULL_IDENTITY = ("the table needs its old rows in the log for updates and deletes: ALTER TABLE {} REPLICA IDENTITY "
                 "FULL (as Flink CDC asks)")


class PgOutputDecoder:
    """pgoutput's binary protocol, version 1: relations, begin, commit, insert, update, delete; others skipped."""

    def __init__(self):
        self.relations: dict[int, tuple[str, list[str]]] = {}  # relation id -> (schema.table, column names)

    def decode(self, data: bytes, data_start: int) -> list:
        """The events of one message."""
        kind = data[:1]
        if kind == b"B":
            return [Begin()]
        if kind == b"C":
            _, _, end_lsn = struct.unpack_from(">BQQ", data, 1)
            return [Commit(end_lsn)]
        if kind == b"R":
            self._relation(data)
            return []
        if kind in (b"I", b"U", b"D"):
            return self._change(kind, data)
        return []  # type, origin, truncate and logical messages: nothing for the changelog

    def _relation(self, data: bytes) -> None:
        (relid,), pos = struct.unpack_from(">I", data, 1), 5
        schema, pos = _string(data, pos)
        table, pos = _string(data, pos)
        pos += 1  # replica identity setting
        (count,), pos = struct.unpack_from(">H", data, pos), pos + 2
        names = []
        for _ in range(count):
            name, pos = _string(data, pos + 1)
            names.append(name)
            pos += 8  # type oid, type modifier
        self.relations[relid] = (f"{schema}.{table}", names)

    def _change(self, kind: bytes, data: bytes) -> list:
        (relid,) = struct.unpack_from(">I", data, 1)
        table, names = self.relations[relid]
        pos, old = 5, None
        if data[pos:pos + 1] in (b"K", b"O"):
            if data[pos:pos + 1] == b"K":
                raise DecodingError(f"table {table}: {FULL_IDENTITY.format(table)}")
            old, pos = _tuple(data, pos + 1, names)
        if kind == b"D":
            if old is None:
                raise DecodingError(f"table {table}: {FULL_IDENTITY.format(table)}")
            return [Change(DELETE, old)]
        new, pos = _tuple(data, pos + 1, names, old)  # skip the 'N'
        if kind == b"I":
            return [Change(INSERT, new)]
        if old is None:
            raise DecodingError(f"table {table}: {FULL_IDENTITY.format(table)}")
        return [Change(UPDATE_BEFORE, old), Change(UPDATE_AFTER, new)]


def _string(data: bytes, pos: int) -> tuple[str, int]:
    end = data.index(b"\0", pos)
    return data[pos:end].decode(), end + 1


def _tuple(data: bytes, pos: int, names: list[str], old: dict | None = None) -> tuple[dict, int]:
    """TupleData: each column null, unchanged (a TOASTed value kept: taken from the old row) or text."""
    (count,), pos = struct.unpack_from(">H", data, pos), pos + 2
    values: dict[str, str | None] = {}
    for i in range(count):
        kind, pos = data[pos:pos + 1], pos + 1
        if kind == b"t":
            (length,) = struct.unpack_from(">I", data, pos)
            values[names[i]] = data[pos + 4:pos + 4 + length].decode()
            pos += 4 + length
        else:
            values[names[i]] = old.get(names[i]) if kind == b"u" and old is not None else None
    return values, pos


class Wal2JsonDecoder:
    """wal2json's format version 2: one JSON document per begin, change and commit; numbers kept as text."""

    def decode(self, data: bytes, data_start: int) -> list:
        """The events of one message; a commit ends at ``data_start`` (where decoding writes it)."""
        doc = json.loads(data, parse_float=str, parse_int=str)
        action = doc.get("action")
        if action == "B":
            return [Begin()]
        if action == "C":
            return [Commit(data_start)]
        if action not in ("I", "U", "D"):
            return []  # truncate, logical messages
        table = f"{doc.get('schema')}.{doc.get('table')}"
        new = _json_values(doc.get("columns")) or {}
        if action == "I":
            return [Change(INSERT, new)]
        old = _json_values(doc.get("identity"))
        if old is None:
            raise DecodingError(f"table {table}: {FULL_IDENTITY.format(table)}")
        if action == "D":
            return [Change(DELETE, old)]
        return [Change(UPDATE_BEFORE, old), Change(UPDATE_AFTER, {**old, **new})]


def _json_values(columns) -> dict[str, str | None] | None:
    if columns is None:
        return None
    return {c["name"]: None if c.get("value") is None else _text(c["value"]) for c in columns}


def _text(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else json.dumps(value)


def decoder_for(plugin: str):
    """The decoder of ``decoding.plugin.name``: pgoutput or wal2json."""
    return PgOutputDecoder() if plugin == "pgoutput" else Wal2JsonDecoder()
