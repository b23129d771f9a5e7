"""The in-memory catalog (Flink's GenericInMemoryCatalog): tables, views and functions by name.

One catalog per TableEnvironment, so SQL statements and DataStream code of one notebook kernel see
the same tables. A table is its columns (physical, or computed by an expression), an optional
watermark, primary key and partition columns, and connector options; a view is a query; a stream
table is a DataStream registered under a name (``create_temporary_view``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from runtime.sql.errors import SqlValidationError
from runtime.sql.types import flink_type

CATALOG, DATABASE = "default_catalog", "default_database"


@dataclass
class Column:
    """A table column: physical, or computed from ``expr`` (Spark SQL) over the others."""
    name: str
    type: str  # Spark DDL type
    nullable: bool = True
    expr: str | None = None  # a computed column's Spark SQL expression
    flink_expr: str | None = None  # ... as written


@dataclass
class Watermark:
    """WATERMARK FOR column AS column - INTERVAL: the time attribute and its bounded out-of-orderness."""
    column: str
    delay_us: int
    text: str  # the expression as written, for DESCRIBE


@dataclass
class TableDef:
    """A table from CREATE TABLE: columns, watermark, keys and connector options."""
    name: str
    columns: list[Column]
    options: dict[str, str]
    watermark: Watermark | None = None
    primary_key: list[str] = field(default_factory=list)
    partition_keys: list[str] = field(default_factory=list)
    temporary: bool = False
    text: str = ""  # the CREATE statement

    @property
    def physical(self) -> list[Column]:
        """The columns stored by the connector (computed columns left out)."""
        return [c for c in self.columns if c.expr is None]

    def column(self, name: str) -> Column | None:
        """The column called ``name``, or None."""
        return next((c for c in self.columns if c.name == name), None)


@dataclass
class ViewDef:
    """A view from CREATE VIEW (or create_temporary_view): its query, planned afresh where it is used."""
    name: str
    query: Any  # sqlglot expression
    text: str
    columns: list[Column]
    temporary: bool = False


@dataclass
class StreamTable:
    """A DataStream under a table name; its rows enter a query as they are (no connector)."""
    name: str
    stream: Any  # runtime.api.datastream.DataStream
    columns: list[Column]
    rowtime: str | None = None
    temporary: bool = True


@dataclass
class FunctionDef:
    """A Python function registered for SQL (runtime.sql.user_functions): a temporary system function
    (``system``: found before the built-ins, as Flink looks names up) or a temporary catalog function (found
    after them, or by its path ``default_catalog.default_database.name``)."""
    name: str  # lower case
    function: Any  # runtime.udf.UserDefinedFunctionWrapper
    result_type: str  # Spark DDL type of its value; a table function's row as STRUCT<...>
    system: bool = False
    spark_name: str = ""  # what its calls are named in Spark SQL: one name per function body

    @property
    def kind(self) -> str:
        """scalar, table or aggregate."""
        return self.function.kind


class Catalog:
    """The in-memory catalog of one table environment: tables, views and functions by name."""
    def __init__(self):
        self.tables: dict[str, TableDef | ViewDef | StreamTable] = {}
        self.functions: dict[str, FunctionDef] = {}  # temporary catalog functions by name
        self.system_functions: dict[str, FunctionDef] = {}  # temporary system functions by name

    def get(self, name: str) -> TableDef | ViewDef | StreamTable | None:
        """The table, view or stream called ``name`` (qualified or not), or None."""
        return self.tables.get(_strip(name))

    def require(self, name: str) -> TableDef | ViewDef | StreamTable:
        """The table, view or stream called ``name``; SqlValidationError naming the known ones if none."""
        found = self.get(name)
        if found is None:
            known = ", ".join(sorted(self.tables)) or "none"
            raise SqlValidationError(f"table or view {name!r} does not exist (known: {known})")
        return found

    def add(self, item, if_not_exists: bool = False, replace: bool = False) -> bool:
        """Register a table, view or stream; False if it existed and ``if_not_exists`` said to keep it."""
        if item.name in self.tables and not replace:
            if if_not_exists:
                return False
            kind = "view" if isinstance(self.tables[item.name], ViewDef) else "table"
            raise SqlValidationError(f"a {kind} named {item.name!r} already exists")
        self.tables[item.name] = item
        return True

    def drop(self, name: str, kind: str, if_exists: bool = False) -> bool:
        """Remove a table or view (``kind`` TABLE or VIEW must match); False if absent and ``if_exists``."""
        found = self.get(name)
        if found is None:
            if if_exists:
                return False
            raise SqlValidationError(f"{kind.lower()} {name!r} does not exist")
        is_view = isinstance(found, (ViewDef, StreamTable))
        if (kind.upper() == "VIEW") != is_view:
            what = "a view" if is_view else "a table"
            raise SqlValidationError(f"{name!r} is {what}: use DROP {'VIEW' if is_view else 'TABLE'}")
        del self.tables[_strip(name)]
        return True

    def table_names(self) -> list[str]:
        """The names of the tables (CREATE TABLE), sorted."""
        return sorted(n for n, t in self.tables.items() if isinstance(t, TableDef))

    def view_names(self) -> list[str]:
        """The names of views and registered streams, sorted."""
        return sorted(n for n, t in self.tables.items() if not isinstance(t, TableDef))

    def add_function(self, fn: FunctionDef, if_not_exists: bool = False) -> bool:
        """Register a Python function as a system or catalog function; False if one of that name (any case)
        existed and ``if_not_exists`` said to keep it, else SqlValidationError naming it."""
        table = self.system_functions if fn.system else self.functions
        if fn.name.lower() in table:
            if if_not_exists:
                return False
            kind = "temporary system function" if fn.system else "temporary function"
            raise SqlValidationError(f"a {kind} named {fn.name!r} already exists")
        table[fn.name.lower()] = fn
        return True

    def drop_function(self, name: str, system: bool, if_exists: bool = False) -> bool:
        """Remove a system or catalog function; False if absent and ``if_exists``, else SqlValidationError."""
        table = self.system_functions if system else self.functions
        if table.pop(_strip(name).lower(), None) is not None:
            return True
        if if_exists:
            return False
        raise SqlValidationError(f"{'temporary system function' if system else 'temporary function'} {name!r} "
                                 "does not exist")

    def function_names(self) -> list[str]:
        """The names of every registered Python function, sorted."""
        return sorted({*self.system_functions, *self.functions})

    def all_functions(self) -> list[FunctionDef]:
        """Every registered Python function (system ones first)."""
        return [*self.system_functions.values(), *self.functions.values()]


def describe_rows(item) -> list[dict]:
    """DESCRIBE's rows, Flink's columns: name, type, null, key, extras, watermark."""
    rows = []
    pk = set(getattr(item, "primary_key", []))
    watermark = getattr(item, "watermark", None)
    for c in item.columns:
        type_ = flink_type(c.type) + ("" if c.nullable and c.name not in pk else " NOT NULL")
        if watermark is not None and watermark.column == c.name:
            type_ += " *ROWTIME*"
        rows.append({"name": c.name, "type": type_, "null": c.nullable and c.name not in pk,
                     "key": f"PRI({', '.join(item.primary_key)})" if c.name in pk else None,
                     "extras": f"AS {c.flink_expr}" if c.flink_expr else None,
                     "watermark": watermark.text if watermark is not None and watermark.column == c.name else None})
    return rows


def _strip(name: str) -> str:
    """``default_catalog.default_database.t`` and ``t`` name the same table."""
    parts = [p.strip("`") for p in name.split(".")]
    if len(parts) == 3 and parts[:2] == [CATALOG, DATABASE] or len(parts) == 2 and parts[0] == DATABASE:
        return parts[-1]
    return ".".join(parts)
