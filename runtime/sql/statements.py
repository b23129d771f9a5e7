"""A script (a cell) cut into statements, each recognised and parsed, with positions kept.

Statements are separated by ``;`` outside strings and comments (the Flink tokenizer finds them);
``EXECUTE STATEMENT SET BEGIN ...; ...; END`` (and the SQL client's ``BEGIN STATEMENT SET; ...
END;``) is one statement. The client-side forms (SET, RESET, SHOW, DESCRIBE, EXPLAIN, USE) are
recognised by their leading words; everything else goes to sqlglot with the Flink dialect. Every
error carries the line and column in the whole script.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError
from sqlglot.tokens import TokenType

from runtime.sql.dialect import Flink
from runtime.sql.errors import SqlParseError, UnsupportedSqlError

_SET = re.compile(r"^SET(?:\s+(?P<key>'[^']*'|[\w.\-]+)\s*=\s*(?P<value>'(?:[^']|'')*'|[^\s;]+))?\s*$", re.I | re.S)
_RESET = re.compile(r"^RESET(?:\s+(?P<key>'[^']*'|[\w.\-]+))?\s*$", re.I | re.S)
_SHOW = re.compile(r"^SHOW\s+(?P<what>TABLES|VIEWS|FUNCTIONS|USER\s+FUNCTIONS|CATALOGS|DATABASES|JOBS|"
                   r"CURRENT\s+CATALOG|CURRENT\s+DATABASE|CREATE\s+(?:TABLE|VIEW)\s+(?P<table>[\w`.]+)|"
                   r"COLUMNS\s+(?:FROM|IN)\s+(?P<columns_of>[\w`.]+))\s*$", re.I | re.S)
_CREATE_FUNCTION = re.compile(r"^CREATE\s+(?P<temporary>TEMPORARY\s+)?(?P<system>SYSTEM\s+)?FUNCTION\s+"
                              r"(?P<exists>IF\s+NOT\s+EXISTS\s+)?(?P<name>[\w`.]+)\s+AS\s+(?P<path>'[^']*')"
                              r"(?:\s+LANGUAGE\s+(?P<language>\w+))?\s*$", re.I | re.S)
_DROP_FUNCTION = re.compile(r"^DROP\s+(?P<temporary>TEMPORARY\s+)?(?P<system>SYSTEM\s+)?FUNCTION\s+"
                            r"(?P<exists>IF\s+EXISTS\s+)?(?P<name>[\w`.]+)\s*$", re.I | re.S)
_DESCRIBE = re.compile(r"^(?:DESCRIBE|DESC)\s+(?P<name>[\w`.]+)\s*$", re.I | re.S)
_EXPLAIN = re.compile(r"^EXPLAIN(?:\s+PLAN\s+FOR|(?P<details>(?:\s*,?\s*(?:ESTIMATED_COST|CHANGELOG_MODE|PLAN_ADVICE|"
                      r"JSON_EXECUTION_PLAN))+))?\s+", re.I)
_USE = re.compile(r"^USE\s+", re.I)


@dataclass
class Statement:
    """One statement: its text, where it starts in the script, what kind it is and what was parsed."""
    text: str
    start: int  # offset of its first character in the script
    script: str
    kind: str = ""
    ast: exp.Expr | None = None
    args: dict = field(default_factory=dict)
    inner: list[Statement] = field(default_factory=list)  # EXPLAIN's statement, a statement set's INSERTs

    def position(self, offset: int = 0) -> tuple[int, int]:
        """Line and column (1-based) in the whole script of this statement's ``offset``."""
        return line_column(self.script, self.start + offset)

    def error(self, cls, message: str, offset: int = 0):
        """An SqlError of class ``cls`` at ``offset`` in this statement, positioned in the whole script."""
        line, column = self.position(offset)
        return cls(message, line, column)


def line_column(text: str, offset: int) -> tuple[int, int]:
    """The 1-based line and column of ``offset`` in ``text``."""
    before = text[:offset]
    return before.count("\n") + 1, offset - (before.rfind("\n") + 1) + 1


def split(script: str) -> list[Statement]:
    """The statements of ``script`` in order; SqlParseError (with position) if it does not tokenize."""
    try:
        tokens = Flink().tokenize(script)
    except TokenError as err:
        raise SqlParseError("a string or quoted name is not closed", *_token_error_position(script, err)) from None
    pieces: list = []
    current: list = []
    depth = 0
    for i, token in enumerate(tokens):
        words = [t.text.upper() for t in tokens[i:i + 4]]
        if words[:4] == ["EXECUTE", "STATEMENT", "SET", "BEGIN"] or words[:3] == ["BEGIN", "STATEMENT", "SET"]:
            depth += 1
        if token.token_type == TokenType.SEMICOLON and depth == 0:
            if current:
                pieces.append(current)
            current = []
            continue
        current.append(token)
        if token.text.upper() == "END" and depth and (i + 1 == len(tokens) or tokens[i + 1].token_type == TokenType.SEMICOLON):
            depth -= 1
    if current:
        pieces.append(current)
    return [Statement(script[p[0].start:p[-1].end + 1], p[0].start, script) for p in pieces]


def parse_script(script: str) -> list[Statement]:
    """Every statement of a script, recognised and parsed; SqlError with position at the first bad one."""
    return [classify(s) for s in split(script)]


def classify(stmt: Statement) -> Statement:
    """Recognise and parse one statement (fills ``kind``, ``ast``, ``args``, ``inner``)."""
    text = stmt.text
    head = text.split(None, 1)[0].upper() if text.split() else ""
    for pattern, kind in ((_SET, "set"), (_RESET, "reset"), (_SHOW, "show"), (_DESCRIBE, "describe"),
                          (_CREATE_FUNCTION, "create_function"), (_DROP_FUNCTION, "drop_function")):
        match = pattern.match(text)
        if match:
            stmt.kind, stmt.args = kind, {k: _unquote(v) for k, v in match.groupdict().items()}
            return stmt
    if head in ("SET", "RESET", "SHOW", "DESCRIBE", "DESC"):
        raise stmt.error(SqlParseError, f"cannot read this {head} statement: expected "
                         + {"SET": "SET 'key' = 'value'", "RESET": "RESET 'key'",
                            "SHOW": "SHOW TABLES|VIEWS|FUNCTIONS|CATALOGS|DATABASES|JOBS"}.get(head, f"{head} table_name"))
    explain = _EXPLAIN.match(text)
    if explain:
        inner = classify(Statement(text[explain.end():], stmt.start + explain.end(), stmt.script))
        stmt.kind, stmt.inner = "explain", [inner]
        stmt.args = {"details": re.findall(r"[A-Z_]+", (explain.group("details") or "").upper())}
        return stmt
    if _USE.match(text):
        raise stmt.error(UnsupportedSqlError, "USE is not supported: there is one catalog ('default_catalog') "
                                              "with one database ('default_database')")
    words = text.upper().split()
    if words[:3] in (["EXECUTE", "STATEMENT", "SET"], ["BEGIN", "STATEMENT", "SET"]):
        return _statement_set(stmt)
    return _parse_sql(stmt)


def _statement_set(stmt: Statement) -> Statement:
    text = stmt.text
    body_start = re.match(r"^(EXECUTE\s+STATEMENT\s+SET\s+BEGIN|BEGIN\s+STATEMENT\s+SET)\s*;?", text, re.I).end()
    end = re.search(r"END\s*$", text, re.I)
    if end is None:
        raise stmt.error(SqlParseError, "a statement set ends with END", len(text))
    body = text[body_start:end.start()]
    inner = [classify(s) for s in split_at(body, stmt.start + body_start, stmt.script)]
    for s in inner:
        if s.kind != "insert":
            raise s.error(SqlParseError, "a statement set holds only INSERT INTO statements")
    stmt.kind, stmt.inner = "statement_set", inner
    return stmt


def split_at(body: str, start: int, script: str) -> list[Statement]:
    """The statements of ``body``, a part of ``script`` starting at offset ``start``."""
    return [Statement(s.text, s.start + start, script) for s in split(body)]


STATEMENT_WORDS = ("SELECT", "WITH", "VALUES", "INSERT", "CREATE", "DROP", "SET", "RESET", "SHOW", "DESCRIBE",
                   "DESC", "EXPLAIN", "EXECUTE", "BEGIN", "(")


def _parse_sql(stmt: Statement) -> Statement:
    first = stmt.text.split(None, 1)[0].upper() if stmt.text.split() else ""
    if first in ("ALTER", "LOAD", "UNLOAD", "ANALYZE", "TRUNCATE", "UPDATE", "DELETE", "CALL", "ADD", "REMOVE"):
        raise stmt.error(UnsupportedSqlError, f"{first} statements are not supported")
    if not first.startswith(STATEMENT_WORDS):
        raise stmt.error(SqlParseError, f"unknown statement {first!r}: expected one of "
                                        f"{', '.join(STATEMENT_WORDS[:-1])}")
    try:
        asts = sqlglot.parse(stmt.text, read=Flink)
    except ParseError as err:
        detail = err.errors[0] if err.errors else {}
        offset = _offset_of(stmt.text, detail.get("line", 1), detail.get("col", 1))
        found = detail.get("highlight") or "the end"
        raise stmt.error(SqlParseError, _describe_parse_error(detail.get("description", str(err)), found),
                         max(0, offset - len(found) + 1)) from None
    ast = asts[0]
    stmt.ast = ast
    stmt.kind = _kind_of(stmt, ast)
    return stmt


def _kind_of(stmt: Statement, ast: exp.Expr) -> str:
    if isinstance(ast, exp.Query):
        return "query"
    if isinstance(ast, exp.Insert):
        return "insert"
    if isinstance(ast, exp.Create):
        kind = (ast.args.get("kind") or "").upper()
        if kind in ("TABLE", "VIEW", "FUNCTION"):
            return f"create_{kind.lower()}"
    if isinstance(ast, exp.Drop):
        return "drop"
    if isinstance(ast, exp.Describe):
        return "describe"
    first = stmt.text.split(None, 1)[0].upper()
    raise stmt.error(UnsupportedSqlError, f"{first} statements are not supported")


def _describe_parse_error(description: str, found: str) -> str:
    if description.startswith("Required keyword"):
        return f"expected an expression after {found}"
    if description.startswith("Invalid expression / Unexpected token"):
        return f"unexpected {found!r}"
    description = re.sub(r"but got <Token token_type: TokenType.SENTINEL.*", "but found the end of the statement",
                         description)
    description = re.sub(r"but got <Token token_type: [\w.]+, text: ([^,]*),.*", r"but found '\1'", description)
    return (description[0].lower() + description[1:] if description else "syntax error") + f" (at {found!r})"


def _offset_of(text: str, line: int, col: int) -> int:
    lines = text.split("\n")
    return sum(len(x) + 1 for x in lines[:line - 1]) + col - 1


def _token_error_position(script: str, err: TokenError) -> tuple[int | None, int | None]:
    """Where tokenizing stopped: sqlglot says only what it read; an unclosed quote is the usual cause."""
    last_quote = max(script.rfind("'"), script.rfind("`"))
    return line_column(script, last_quote) if last_quote >= 0 else (None, None)


def _unquote(value: str | None) -> str | None:
    if value is None:
        return None
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] == "'":
        return value[1:-1].replace("''", "'")
    return value
