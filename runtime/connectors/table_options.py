"""What a connector's SQL table factory is made of (Flink's ``DynamicTableFactory`` idea).

A factory has an identifier (the ``'connector'`` value of ``CREATE TABLE ... WITH (...)``), the options
it requires and the options it accepts, each a :class:`ConfigOption` with a type and a default, and
turns a table into the params of its source or sink operator. :class:`TableFactory` does the checks
every factory shares, as Flink's ``FactoryUtil`` helper does: an unknown option, a missing required
option and a value that does not read as its type are refused naming the table, the option and the
value. A factory only adds what is its own (the datagen connector's per-field keys, the filesystem's
format check).

The factory sees a table through :class:`TableSpec`, which the SQL catalog's ``TableDef`` fits: this
module and the connectors know nothing of the SQL layer above them. Its errors are ConnectorErrors;
the SQL layer shows them as SQL errors with the same words.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from runtime.config_values import DURATION_HINT, parse_duration
from runtime.errors import ConnectorError

INSERT_ONLY, UPSERT, ALL_CHANGES = "insert-only", "upsert", "all"  # what a sink consumes (Flink's ChangelogMode)
SINK_PARALLELISM = "sink_parallelism"  # in a sink's params: the parallelism its table asks for (sink.parallelism)


class TableOptionError(ConnectorError):
    """A table's connector options that cannot work: the message names the table, the option and the value."""


class UnsupportedTableOption(ConnectorError):
    """An option or connector Flink has that is not available here; the message names it."""


class ColumnSpec(Protocol):
    """A column as a factory sees it: its name, its Spark DDL type and whether it may be NULL."""
    name: str
    type: str
    nullable: bool


class TableSpec(Protocol):
    """A table as a factory sees it (runtime.sql.catalog.TableDef fits)."""
    name: str
    options: dict[str, str]
    primary_key: list[str]
    partition_keys: list[str]

    @property
    def physical(self) -> Sequence[ColumnSpec]: ...

    def column(self, name: str) -> Any: ...


def _boolean(value: Any) -> bool:
    text = str(value).strip().lower()
    if text not in ("true", "false"):
        raise ValueError(value)
    return text == "true"


EXPECTED: dict[Callable, str] = {int: "an integer", float: "a number", parse_duration: DURATION_HINT,
                                 _boolean: "'true' or 'false'", str: "a string"}


@dataclass(frozen=True)
class ConfigOption:
    """One option of a connector: its key, how its text reads (int, float, parse_duration, boolean, str or a
    tuple of allowed words) and its default (None: no default)."""
    key: str
    kind: Any = str
    default: Any = None
    description: str = ""

    def read(self, table_name: str, value: Any) -> Any:
        """``value`` as this option's type; TableOptionError naming the table, the option and the value."""
        if isinstance(self.kind, tuple):
            if value not in self.kind:
                raise TableOptionError(f"table {table_name!r}: option {self.key!r} must be one of "
                                       f"{', '.join(self.kind)}, got {value!r}")
            return value
        return read_option(table_name, self.key, value, self.kind)


BOOLEAN = _boolean


def read_option(table_name: str, key: str, value: Any, parse: Callable) -> Any:
    """``value`` of option ``key`` read by ``parse`` (int, float, parse_duration, BOOLEAN, str); refused naming
    the table, the option and the value."""
    try:
        return parse(value)
    except (ValueError, TypeError):
        raise TableOptionError(f"table {table_name!r}: option {key!r} must be {EXPECTED[parse]}, "
                               f"got {value!r}") from None


class TableFactory:
    """A connector's SQL side: subclasses set ``identifier``, ``required`` and ``optional`` and override
    ``source_params`` and/or ``sink_params``; ``check`` runs at CREATE TABLE, the others where the table is read
    or written."""
    identifier = ""
    required: tuple[ConfigOption, ...] = ()
    optional: tuple[ConfigOption, ...] = ()
    prefixes: tuple[str, ...] = ()  # option keys under these prefixes are passed on unchecked (csv.*, ...)
    lookup_source = False  # whether lookup joins can look rows up in its tables (lookup_params)
    # Whether its source is a changelog (+I, -U, +U, -D) read by one subtask, to be hashed by the primary key.
    changelog_source = False

    def check(self, table: TableSpec) -> None:
        """Refuse unknown options and missing required ones (at CREATE TABLE, as Flink's factories do); values
        are read where the table is used, by :meth:`get`."""
        known = {o.key for o in self.required + self.optional}
        for key in table.options:
            if key == "connector" or key.startswith(self.prefixes) or self.extra_option(table, key):
                continue
            if key not in known:
                raise TableOptionError(f"table {table.name!r}: unsupported option {key!r} for connector "
                                       f"{self.identifier!r} (supported: {', '.join(sorted(known)) or 'none'})")
        for option in self.required:
            if option.key not in table.options:
                raise TableOptionError(f"table {table.name!r}: the {self.identifier} connector needs a {option.key!r} "
                                       "option" + (f" ({option.description})" if option.description else ""))

    def extra_option(self, table: TableSpec, key: str) -> bool:
        """Whether ``key`` is one of this connector's own dynamic keys (``fields.<column>.min``); it may refuse it."""
        return False

    def get(self, table: TableSpec, option: ConfigOption) -> Any:
        """The option's value in ``table`` read as its type, or its default."""
        value = table.options.get(option.key)
        return option.default if value is None else option.read(table.name, value)

    def sink_changelog(self, table: TableSpec) -> str:
        """What the sink consumes: INSERT_ONLY (a changelog is refused at planning), UPSERT or ALL_CHANGES."""
        return INSERT_ONLY

    def source_params(self, table: TableSpec, runtime_mode: str) -> dict:
        """The params of the source operator reading ``table``'s physical columns."""
        raise TableOptionError(f"table {table.name!r} ({self.identifier}) can only be written to, not read")

    def sink_params(self, table: TableSpec) -> dict:
        """The params of the sink operator writing into ``table``."""
        raise TableOptionError(f"table {table.name!r} ({self.identifier}) can only be read, not written to")

    def lookup_params(self, table: TableSpec) -> dict:
        """The params of the lookup function a lookup join uses on ``table`` (when ``lookup_source``)."""
        raise TableOptionError(f"table {table.name!r} ({self.identifier}) cannot be looked up")

    def check_reachable(self, table: TableSpec, role: str) -> None:
        """When a statement using ``table`` as ``role`` (source, sink or lookup) is submitted: ask the system behind
        it whether the job can work (credentials, the table, its keys), raising ConnectorError naming the table,
        the option and the cause. Connectors of local data have nothing to ask."""


def physical_schema(table: TableSpec, leave_out: Sequence[str] = ()) -> str:
    """The DDL of ``table``'s physical columns (those not in ``leave_out``), as sources declare their schema."""
    return ", ".join(f"`{c.name}` {c.type}" for c in table.physical if c.name not in leave_out)
