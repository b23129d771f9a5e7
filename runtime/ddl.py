"""Schemas written as Spark DDL (``"user BIGINT, name STRING"``), read into Arrow without a JVM.

Spark parses DDL only through a running session; the client checks a schema when a job is built and
operators that assemble Arrow output from Python rows need one on the TaskManager's threads, so this
small parser covers the types rows carry: BOOLEAN, TINYINT, SMALLINT, INT, BIGINT, FLOAT, DOUBLE,
DECIMAL(p, s), STRING, VARCHAR(n), CHAR(n), BINARY, DATE, TIMESTAMP (UTC), TIMESTAMP_NTZ, and
ARRAY<t>, MAP<k, v>, STRUCT<name: t, ...> of them; a field may say NOT NULL.
"""
from __future__ import annotations

import re

import pyarrow as pa

from runtime.errors import SubmissionError

_TOKEN = re.compile(r"\s*(?:`((?:[^`]|``)*)`|([A-Za-z_][A-Za-z_0-9]*)|(\d+)|([<>(),:]))")

_PRIMITIVES = {
    "boolean": pa.bool_(), "tinyint": pa.int8(), "byte": pa.int8(), "smallint": pa.int16(), "short": pa.int16(),
    "int": pa.int32(), "integer": pa.int32(), "bigint": pa.int64(), "long": pa.int64(),
    "float": pa.float32(), "real": pa.float32(), "double": pa.float64(), "string": pa.string(),
    "binary": pa.binary(), "date": pa.date32(), "timestamp": pa.timestamp("us", tz="UTC"),
    "timestamp_ltz": pa.timestamp("us", tz="UTC"), "timestamp_ntz": pa.timestamp("us"),
}


class DDLError(SubmissionError):
    """A schema string that does not parse; the message quotes it and says what was expected."""


def arrow_schema(ddl: str) -> pa.Schema:
    """The Arrow schema of a DDL column list; DDLError if it does not parse or declares no columns."""
    if not isinstance(ddl, str) or not ddl.strip():
        raise DDLError(f"a schema is a DDL string like 'user BIGINT, n BIGINT', got {ddl!r}")
    schema = pa.schema(_Parser(ddl).fields(closing=None))
    repeated = sorted({n for n in schema.names if schema.names.count(n) > 1})
    if repeated:
        raise DDLError(f"schema {ddl!r} names column(s) {repeated} more than once")
    return schema


class _Parser:
    def __init__(self, ddl: str):
        self.ddl = ddl
        self.tokens = _tokenize(ddl)
        self.pos = 0

    def fail(self, expected: str):
        found = repr(self.tokens[self.pos][1]) if self.pos < len(self.tokens) else "the end"
        raise DDLError(f"schema {self.ddl!r} does not parse: expected {expected}, found {found}")

    def peek(self) -> str | None:
        return self.tokens[self.pos][1].lower() if self.pos < len(self.tokens) else None

    def take(self, expected: str | None = None, what: str = "more") -> tuple[str, str]:
        """The next token (kind, text); with ``expected``, it must be that punctuation or word."""
        if self.pos >= len(self.tokens) or (expected is not None and self.peek() != expected):
            self.fail(repr(expected) if expected else what)
        self.pos += 1
        return self.tokens[self.pos - 1]

    def fields(self, closing: str | None) -> list[pa.Field]:
        """``name [:] type [NOT NULL]`` separated by commas, up to ``closing`` (or the end)."""
        out = []
        while True:
            kind, name = self.take(what="a column name")
            if kind not in ("name", "quoted"):
                self.pos -= 1
                self.fail("a column name")
            if self.peek() == ":":
                self.take(":")
            type_ = self.type()
            nullable = True
            if self.peek() == "not":
                self.take("not")
                self.take("null")
                nullable = False
            out.append(pa.field(name, type_, nullable))
            if self.peek() != ",":
                break
            self.take(",")
        if self.peek() != closing:
            self.fail("',' or " + (repr(closing) if closing else "the end"))
        if closing:
            self.take(closing)
        return out

    def type(self) -> pa.DataType:
        kind, word = self.take(what="a type")
        word = word.lower()
        if kind != "name":
            self.pos -= 1
            self.fail("a type")
        if word in ("decimal", "dec", "numeric"):
            args = self.numbers()
            if len(args) > 2:
                self.pos -= 1
                self.fail("DECIMAL(precision[, scale])")
            return pa.decimal128(args[0] if args else 10, args[1] if len(args) > 1 else 0)
        if word in ("varchar", "char"):
            self.numbers()
            return pa.string()
        if word == "array":
            self.take("<")
            item = self.type()
            self.take(">")
            return pa.list_(item)
        if word == "map":
            self.take("<")
            key = self.type()
            self.take(",")
            value = self.type()
            self.take(">")
            return pa.map_(key, value)
        if word == "struct":
            self.take("<")
            return pa.struct(self.fields(closing=">"))
        if word not in _PRIMITIVES:
            self.pos -= 1
            self.fail(f"a type (one of {sorted(_PRIMITIVES)}, DECIMAL, VARCHAR, CHAR, ARRAY, MAP, STRUCT)")
        return _PRIMITIVES[word]

    def numbers(self) -> list[int]:
        """An optional ``(n[, m])`` after a type name."""
        numbers: list[int] = []
        if self.peek() != "(":
            return numbers
        self.take("(")
        while True:
            kind, text = self.take(what="a number")
            if kind != "number":
                self.pos -= 1
                self.fail("a number")
            numbers.append(int(text))
            if self.peek() != ",":
                break
            self.take(",")
        self.take(")")
        return numbers


def _tokenize(ddl: str) -> list[tuple[str, str]]:
    tokens, pos = [], 0
    while pos < len(ddl.rstrip()):
        match = _TOKEN.match(ddl, pos)
        if match is None:
            raise DDLError(f"schema {ddl!r} does not parse: unexpected {ddl[pos:].strip()[:10]!r}")
        quoted, name, number, punct = match.groups()
        if quoted is not None:
            tokens.append(("quoted", quoted.replace("``", "`")))
        elif name is not None:
            tokens.append(("name", name))
        elif number is not None:
            tokens.append(("number", number))
        else:
            tokens.append(("punct", punct))
        pos = match.end()
    return tokens


def ddl_type(text: str) -> pa.DataType:
    """The Arrow type of one DDL type (``INT``, ``DECIMAL(38,6)``); DDLError if it does not parse."""
    return arrow_schema(f"`value` {text}").field(0).type
