"""SQL errors: each names where (line and column of the cell or script) and what was expected."""
from __future__ import annotations

from runtime.errors import SubmissionError


class SqlError(SubmissionError):
    """A statement that cannot run; ``line``/``column`` (1-based) point into the submitted text."""

    def __init__(self, message: str, line: int | None = None, column: int | None = None):
        self.message, self.line, self.column = message, line, column
        where = f"line {line}, column {column}: " if line is not None else ""
        super().__init__(where + message)

    def at(self, line: int | None, column: int | None) -> SqlError:
        """The same error placed at ``line``/``column`` when it has no position of its own."""
        if self.line is not None or line is None:
            return self
        return type(self)(self.message, line, column)


class SqlParseError(SqlError):
    """The text is not SQL that parses."""


class SqlValidationError(SqlError):
    """SQL that parses but names what does not exist or does not fit (a table, a column, a type)."""


class UnsupportedSqlError(SqlError):
    """A construct Flink has that this planner does not run; refused by name, never run otherwise."""
