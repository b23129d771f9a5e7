"""The Table API, with PyFlink's names: a StreamTableEnvironment over a StreamExecutionEnvironment.

``StreamTableEnvironment.create(env)`` shares the environment's in-memory catalog, so SQL and
DataStream code working on one environment (one notebook kernel) see the same tables and views.
``execute_sql`` runs any statement (runtime.sql.executor); ``sql_query`` plans a query into a Table
that can be executed, explained, registered as a view or turned back into a DataStream.
"""
from __future__ import annotations

import itertools
from typing import Any

from runtime.api.datastream import DataStream
from runtime.table.result import TableResult
from runtime.changelog import Row, RowKind, materialize
from runtime.sql import statements, user_functions
from runtime.sql.catalog import Catalog, Column, StreamTable, ViewDef
from runtime.sql.errors import SqlValidationError
from runtime.sql.executor import SqlExecutor

__all__ = ["StreamTableEnvironment", "Table", "TableResult", "Row", "RowKind"]
_unnamed = itertools.count()


def catalog_of(env) -> Catalog:
    """The environment's catalog, made on first use (one per environment, shared by SQL and DataStreams)."""
    catalog = getattr(env, "table_catalog", None)
    if catalog is None:
        catalog = Catalog()
        env.table_catalog = catalog
    return catalog


class TableConfig:
    """``t_env.get_config()``: the same settings SET changes."""

    def __init__(self, t_env: StreamTableEnvironment):
        self._t_env = t_env

    def set(self, key: str, value: str) -> TableConfig:
        """Set a configuration key, as ``SET 'key' = 'value'`` does; SqlError for an unknown or ill-typed key."""
        self._t_env.execute_sql(f"SET '{key}' = '{value}'")
        return self

    def get(self, key: str, default: Any = None) -> Any:
        """A key's value: a SQL client setting, else the environment's configuration, else ``default``."""
        executor = self._t_env.executor
        return executor.client_settings.get(key, executor.env.config.get(key, default))


class StreamTableEnvironment:
    """PyFlink's StreamTableEnvironment: runs SQL statements and makes Tables on one environment's catalog."""
    def __init__(self, env, catalog: Catalog | None = None):
        self.env = env
        self.catalog = catalog or catalog_of(env)
        self.executor = SqlExecutor(self.catalog, env)

    @classmethod
    def create(cls, stream_execution_environment=None, environment_settings=None) -> StreamTableEnvironment:
        """A table environment over ``stream_execution_environment`` (a new one when None); an
        EnvironmentSettings' runtime mode (``in_batch_mode()``) sets the environment's mode."""
        from runtime.api.environment import StreamExecutionEnvironment

        env = stream_execution_environment or StreamExecutionEnvironment()
        t_env = cls(env)
        mode = getattr(environment_settings, "runtime_mode", None)
        if mode:
            env.set_runtime_mode(mode)
        return t_env

    def get_config(self) -> TableConfig:
        """The settings SET and RESET change (TableConfig)."""
        return TableConfig(self)

    # -- statements ---------------------------------------------------------------------------
    def execute_sql(self, statement: str) -> TableResult:
        """Run one statement (a query, INSERT, DDL, SET, SHOW, EXPLAIN, ...); SqlError names line and column."""
        parsed = statements.parse_script(statement)
        if len(parsed) != 1:
            raise SqlValidationError(f"execute_sql takes one statement, got {len(parsed)}")
        return TableResult(self.executor.execute(parsed[0]))

    def sql_query(self, query: str) -> Table:
        """Plan one SELECT into a Table (validated now, as Flink does); SqlError names line and column."""
        parsed = statements.parse_script(query)
        if len(parsed) != 1 or parsed[0].kind != "query":
            raise SqlValidationError("sql_query takes one SELECT query")
        stmt = parsed[0]
        plan = self.executor.converter(stmt).query(stmt.ast.copy())  # validates now, as Flink does
        return Table(self, stmt, plan)

    def explain_sql(self, statement: str) -> str:
        """EXPLAIN's text for one query, INSERT or statement set: logical plan, JobGraph, ExecutionGraph."""
        return self.execute_sql(f"EXPLAIN {statement}").result.text

    # -- catalog ------------------------------------------------------------------------------
    def create_temporary_view(self, name: str, table: Table | DataStream, schema: str | None = None) -> None:
        """Register a Table or a DataStream under ``name`` for later SQL; SqlError if the name is taken."""
        if isinstance(table, DataStream):
            table = self.from_data_stream(table, schema)
        view = ViewDef(name, table.stmt.ast.copy(), table.stmt.text, [Column(f.name, f.type) for f in table.plan.fields],
                       temporary=True)
        self.catalog.add(view)

    def from_data_stream(self, stream: DataStream, schema: str | None = None) -> Table:
        """A Table of a DataStream's rows; ``schema`` (DDL) when the stream's columns cannot be told from its source."""
        from runtime.sql.streams import stream_columns

        columns = stream_columns(stream, schema)
        name = f"UnnamedTable${next(_unnamed)}"
        self.catalog.add(StreamTable(name, stream, columns, rowtime=stream.timestamp_column))
        return self.sql_query(f"SELECT * FROM `{name}`")

    def from_path(self, path: str) -> Table:
        """The Table of a catalog table or view, by name."""
        return self.sql_query(f"SELECT * FROM {path}")

    def create_temporary_function(self, path: str, function, result_type: str | None = None) -> None:
        """A temporary catalog function, as PyFlink's: ``function`` made by udf(), udtf() or udaf()
        (runtime.udf), called in SQL by ``path`` where no built-in has that name, or by its full path
        ``default_catalog.default_database.name``. A plain callable with ``result_type`` is a vectorised
        scalar function (pandas Series in, one Series out), as this method took it before."""
        self.catalog.add_function(user_functions.define(path, _as_function(function, result_type), system=False))

    def create_temporary_system_function(self, name: str, function) -> None:
        """A temporary system function, as PyFlink's: found before the built-ins, so it may shadow one."""
        self.catalog.add_function(user_functions.define(name, _as_function(function, None), system=True))

    def drop_temporary_function(self, path: str) -> bool:
        """Drop a temporary catalog function; False if there was none of that name."""
        return self.catalog.drop_function(path, system=False, if_exists=True)

    def drop_temporary_system_function(self, name: str) -> bool:
        """Drop a temporary system function; False if there was none of that name."""
        return self.catalog.drop_function(name, system=True, if_exists=True)

    def list_user_defined_functions(self) -> list[str]:
        """The registered Python functions' names, sorted."""
        return self.catalog.function_names()

    def add_python_file(self, file_path: str) -> None:
        """Ship a Python file or folder with this environment's jobs (StreamExecutionEnvironment.add_python_file)."""
        self.env.add_python_file(file_path)

    def add_python_archive(self, archive_path: str, target_dir: str | None = None) -> None:
        """Ship a zip archive with this environment's jobs (StreamExecutionEnvironment.add_python_archive)."""
        self.env.add_python_archive(archive_path, target_dir)

    def set_python_requirements(self, requirements_file_path: str, requirements_cached_dir: str | None = None) -> None:
        """Install packages for this environment's jobs (StreamExecutionEnvironment.set_python_requirements)."""
        self.env.set_python_requirements(requirements_file_path, requirements_cached_dir)

    def list_tables(self) -> list[str]:
        """The catalog's table names, sorted."""
        return self.catalog.table_names()

    def list_views(self) -> list[str]:
        """The catalog's view names (views and registered streams), sorted."""
        return self.catalog.view_names()

    def drop_temporary_view(self, name: str) -> bool:
        """Drop a view; False if there was none of that name."""
        return self.catalog.drop(name, "VIEW", if_exists=True)

    # -- back to DataStreams ------------------------------------------------------------------
    def to_data_stream(self, table: Table) -> DataStream:
        """An insert-only Table as a DataStream of its rows; SqlValidationError for an updating one."""
        if table.plan.updating:
            raise SqlValidationError("to_data_stream takes an insert-only table; this one is updating "
                                     "(use to_changelog_stream)")
        return self._stream_of(table)

    def to_changelog_stream(self, table: Table) -> DataStream:
        """The table's changelog as a DataStream: rows carry column ``__op`` (0 +I, 1 -U, 2 +U, 3 -D)."""
        return self._stream_of(table)

    def _stream_of(self, table: Table) -> DataStream:
        from runtime.sql.translator import Translator

        return Translator(self.env, self.executor.runtime_mode, self.catalog).translate(table.plan)


def _as_function(function, result_type: str | None):
    """A udf/udtf/udaf as given; a plain callable as a pandas scalar function of ``result_type`` (STRING when
    not given), the form create_temporary_function took before it took PyFlink's functions."""
    from runtime.udf import UserDefinedFunctionWrapper, udf

    if isinstance(function, UserDefinedFunctionWrapper):
        if result_type is not None:
            raise TypeError("result_type goes to udf()/udtf()/udaf(), not to create_temporary_function")
        return function
    if not callable(function):
        raise TypeError(f"create_temporary_function takes a function made by udf(), udtf() or udaf(), got {function!r}")
    return udf(function, result_type=result_type or "STRING", func_type="pandas")


class Table:
    """A planned query: ``execute()``, ``explain()``, or use it by name in SQL (``f"SELECT * FROM {table}"``)."""

    def __init__(self, t_env: StreamTableEnvironment, stmt, plan):
        self.t_env, self.stmt, self.plan = t_env, stmt, plan
        self._name: str | None = None

    def __str__(self) -> str:
        if self._name is None:
            self._name = f"UnnamedTable${next(_unnamed)}"
            self.t_env.create_temporary_view(self._name, self)
        return f"`{self._name}`"

    def get_schema(self) -> list[tuple[str, str]]:
        """The table's columns as (name, type) pairs, internal columns left out."""
        return [(f.name, f.type) for f in self.plan.fields if not f.name.startswith("__")]

    def execute(self) -> TableResult:
        """Run the query as a job; its TableResult collects the rows (with their kinds when updating)."""
        return TableResult(self.t_env.executor.execute(self.stmt))

    def execute_insert(self, table_path: str) -> TableResult:
        """Run ``INSERT INTO table_path`` with this query; returns the job's TableResult."""
        return self.t_env.execute_sql(f"INSERT INTO {table_path} {self.stmt.text}")

    def explain(self) -> str:
        """EXPLAIN's text for this query."""
        return self.t_env.explain_sql(self.stmt.text)

    def to_pandas(self):
        """Run the query to its end and return the final table (the changelog applied) as pandas."""
        import pandas as pd

        rows = materialize(list(self.execute().collect()))
        return pd.DataFrame([r.as_dict() for r in rows], columns=[f for f, _ in self.get_schema()])
