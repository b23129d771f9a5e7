"""The SQL layer's one door to the connectors: a table's ``WITH (...)`` options, checked and turned into
the params of its source or sink operator by the factory its ``'connector'`` option names
(runtime.connectors.registry). Errors come back as SQL errors with the factory's words: an option or
value that does not work is a SqlValidationError, a connector or option not available here an
UnsupportedSqlError.
"""
from __future__ import annotations

import contextlib
from collections.abc import Iterator

from runtime.connectors import registry
from runtime.errors import ConnectorError
from runtime.connectors.table_options import INSERT_ONLY, UPSERT, TableOptionError, UnsupportedTableOption
from runtime.sql.errors import SqlValidationError, UnsupportedSqlError

__all__ = ["INSERT_ONLY", "UPSERT", "can_look_up", "check_options", "check_reachable", "connector_of",
           "is_changelog_source", "lookup_params", "sink_changelog", "sink_params", "source_params"]


@contextlib.contextmanager
def _as_sql_errors() -> Iterator[None]:
    try:
        yield
    except UnsupportedTableOption as err:
        raise UnsupportedSqlError(str(err)) from None
    except (TableOptionError, ConnectorError) as err:
        raise SqlValidationError(str(err)) from None


def connector_of(table) -> str:
    """The table's 'connector' option; SqlValidationError if missing, UnsupportedSqlError if not available."""
    with _as_sql_errors():
        return registry.table_factory(table).identifier


def check_options(table) -> None:
    """Refuse options the table's connector does not know and required ones it lacks (at CREATE TABLE)."""
    with _as_sql_errors():
        registry.table_factory(table).check(table)


def source_params(table, runtime_mode: str) -> dict:
    """The params of the source operator that reads ``table``'s physical columns."""
    with _as_sql_errors():
        return registry.table_factory(table).source_params(table, runtime_mode)


def sink_params(table) -> dict:
    """The params of the sink operator that writes into ``table``; SqlValidationError for a read-only connector."""
    with _as_sql_errors():
        return registry.table_factory(table).sink_params(table)


def sink_changelog(table) -> str:
    """What ``table``'s sink consumes: INSERT_ONLY, or also updates (upsert by key, or every change)."""
    with _as_sql_errors():
        return registry.table_factory(table).sink_changelog(table)


def can_look_up(table) -> bool:
    """Whether lookup joins can look rows up in ``table`` (its connector offers lookups)."""
    with _as_sql_errors():
        return registry.table_factory(table).lookup_source


def lookup_params(table) -> dict:
    """The params of the lookup function a lookup join uses on ``table``."""
    with _as_sql_errors():
        return registry.table_factory(table).lookup_params(table)


def check_reachable(table, role: str) -> None:
    """Before a job using ``table`` as ``role`` (source, sink, lookup) is submitted: what the system behind it says
    (a database refusing the credentials, a missing table or key), as an SqlValidationError in its words."""
    with _as_sql_errors():
        registry.table_factory(table).check_reachable(table, role)


def is_changelog_source(table) -> bool:
    """Whether ``table``'s source reads a changelog (+I, -U, +U, -D) with one subtask, ordered by its primary key."""
    with _as_sql_errors():
        return registry.table_factory(table).changelog_source
