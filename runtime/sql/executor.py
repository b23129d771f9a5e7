"""Running statements: DDL against the catalog, settings, SHOW/DESCRIBE, and queries and INSERTs as jobs.

One SqlExecutor per TableEnvironment. Queries and INSERTs are planned (runtime.sql.converter),
translated into a fresh StreamExecutionEnvironment that carries the session's settings
(runtime.sql.translator) and submitted; a query's rows come back through the collect sink, with
their row kinds when the result is updating.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from runtime.config import ConfigError
from runtime.sql import explain, statements, tables
from runtime.sql.catalog import CATALOG, DATABASE, describe_rows
from runtime.sql.errors import SqlError, SqlValidationError, UnsupportedSqlError
from runtime.sql.logical import Field, Node, Sink

RESULT_MODES = ("table", "changelog", "tableau")
CLIENT_KEYS = {"sql-client.execution.result-mode": RESULT_MODES, "table.dml-sync": ("true", "false")}


@dataclass
class StatementResult:
    """What one statement produced: a message, rows to show, a job, or an explanation."""
    kind: str  # "ok", "rows", "job", "explain"
    columns: list[str] = field(default_factory=list)
    rows: list[tuple] = field(default_factory=list)
    job: Any = None  # runtime.job_client.JobClient
    fields: list[Field] = field(default_factory=list)
    updating: bool = False
    text: str = ""
    statement: str = ""


class SqlExecutor:
    """Runs statements of one table environment: DDL on its catalog, settings, and queries as jobs."""
    def __init__(self, catalog, env):
        self.catalog = catalog
        self.env = env
        self.client_settings: dict[str, str] = {}
        self.overrides: dict[str, str] = {}  # settings of one notebook cell (its magic's options), over SET's

    @property
    def runtime_mode(self) -> str:
        """streaming or batch: the cell's override, else the environment's execution.runtime-mode."""
        return self.overrides.get("execution.runtime-mode", self.env.config.get("execution.runtime-mode", "streaming"))

    @property
    def local_time_zone(self) -> str:
        """The session time zone (``table.local-time-zone``, ``default`` resolved): TIMESTAMP_LTZ values show in it."""
        from runtime.timezones import resolve

        return resolve(self.overrides.get("table.local-time-zone", self.env.config.get("table.local-time-zone")))

    @property
    def result_mode(self) -> str:
        """The SQL client's result mode (table, changelog or tableau) that SET chose."""
        return self.client_settings.get("sql-client.execution.result-mode", "table")

    def execute_script(self, script: str) -> list[StatementResult]:
        """Every statement of ``script`` in order; stops at the first error (SqlError with position)."""
        return [self.execute(s) for s in statements.parse_script(script)]

    def execute(self, stmt: statements.Statement) -> StatementResult:
        """Run one parsed statement; an SqlError raised on the way is given the statement's position."""
        handler = getattr(self, f"_{stmt.kind}")
        try:
            result = handler(stmt)
        except SqlError as err:
            raise err.at(*stmt.position()) from None
        result.statement = stmt.text
        return result

    # -- settings ---------------------------------------------------------------------------------
    def _set(self, stmt) -> StatementResult:
        key, value = stmt.args.get("key"), stmt.args.get("value")
        if key is None:
            settings = {**self.env.config, **self.client_settings}
            return StatementResult("rows", ["key", "value"], sorted(settings.items()))
        if key in CLIENT_KEYS:
            if value not in CLIENT_KEYS[key]:
                raise stmt.error(SqlValidationError, f"{key} must be one of {', '.join(CLIENT_KEYS[key])}, got {value!r}")
            self.client_settings[key] = value
        else:
            try:
                self.env.set(key, value)
            except (ConfigError, ValueError) as err:
                raise stmt.error(SqlValidationError, str(err)) from None
        return StatementResult("ok", text="[INFO] Execute statement succeeded.")

    def _reset(self, stmt) -> StatementResult:
        key = stmt.args.get("key")
        if key is None:
            self.client_settings.clear()
            self.env.config.clear()
        else:
            self.client_settings.pop(key, None)
            self.env.config.pop(key, None)
        return StatementResult("ok", text="[INFO] Execute statement succeeded.")

    # -- catalog ----------------------------------------------------------------------------------
    def _show(self, stmt) -> StatementResult:
        what = " ".join(stmt.args["what"].upper().split())
        if what == "TABLES":
            return StatementResult("rows", ["table name"], [(n,) for n in self.catalog.table_names()])
        if what == "VIEWS":
            return StatementResult("rows", ["view name"], [(n,) for n in self.catalog.view_names()])
        if what in ("FUNCTIONS", "USER FUNCTIONS"):
            from runtime.sql.builtins import builtin_names

            names = self.catalog.function_names() + ([] if what == "USER FUNCTIONS" else builtin_names())
            return StatementResult("rows", ["function name"], [(n,) for n in names])
        if what in ("CATALOGS", "CURRENT CATALOG"):
            return StatementResult("rows", ["catalog name"], [(CATALOG,)])
        if what in ("DATABASES", "CURRENT DATABASE"):
            return StatementResult("rows", ["database name"], [(DATABASE,)])
        if what.startswith(("CREATE TABLE", "CREATE VIEW")):
            item = self.catalog.require(stmt.args["table"].strip("`"))
            return StatementResult("rows", ["result"], [(getattr(item, "text", ""),)])
        if what.startswith("COLUMNS"):
            return self._describe_rows(stmt.args["columns_of"])
        raise stmt.error(UnsupportedSqlError, f"SHOW {what} is not supported")

    def _describe(self, stmt) -> StatementResult:
        return self._describe_rows(stmt.args.get("name") or stmt.ast.this.name)

    def _describe_rows(self, name: str) -> StatementResult:
        """DESCRIBE's (and SHOW COLUMNS') rows: Flink's columns name, type, null, key, extras, watermark."""
        rows = describe_rows(self.catalog.require(name.strip("`")))
        columns = ["name", "type", "null", "key", "extras", "watermark"]
        return StatementResult("rows", columns, [tuple(r[c] for c in columns) for r in rows])

    def _create_table(self, stmt) -> StatementResult:
        table = tables.table_def(stmt.ast, stmt.text)
        self.catalog.add(table, if_not_exists=bool(stmt.ast.args.get("exists")))
        return StatementResult("ok", text="[INFO] Execute statement succeeded.")

    def _create_view(self, stmt) -> StatementResult:
        from runtime.sql.catalog import Column

        plan = self.converter(stmt).query(stmt.ast.expression.copy())
        view = tables.view_def(stmt.ast, stmt.text, [Column(f.name, f.type) for f in plan.fields])
        self.catalog.add(view, if_not_exists=bool(stmt.ast.args.get("exists")), replace=bool(stmt.ast.args.get("replace")))
        return StatementResult("ok", text="[INFO] Execute statement succeeded.")

    def _create_function(self, stmt) -> StatementResult:
        """CREATE [TEMPORARY [SYSTEM]] FUNCTION [IF NOT EXISTS] f AS 'module.fn' LANGUAGE PYTHON: the module is
        imported here (and, for the job, on the TaskManagers: ship it with add_python_file)."""
        from runtime.sql import user_functions

        args, name = stmt.args, stmt.args["name"].replace("`", "")
        language = (args.get("language") or "JAVA").upper()
        if language != "PYTHON":
            raise stmt.error(UnsupportedSqlError, f"function {name!r}: LANGUAGE {language} is not supported; Python "
                                                  "functions are (AS 'module.function' LANGUAGE PYTHON)")
        system = bool(args.get("system"))
        if system and not args.get("temporary"):
            raise stmt.error(SqlValidationError, "a SYSTEM function is TEMPORARY: CREATE TEMPORARY SYSTEM FUNCTION")
        found = user_functions.import_function(name, args["path"], self.env.config.get("python.files", ""))
        fdef = user_functions.define(name, found, system)
        self.catalog.add_function(fdef, if_not_exists=bool(args.get("exists")))
        return StatementResult("ok", text="[INFO] Execute statement succeeded.")

    def _drop_function(self, stmt) -> StatementResult:
        args = stmt.args
        self.catalog.drop_function(args["name"].replace("`", ""), bool(args.get("system")), bool(args.get("exists")))
        return StatementResult("ok", text="[INFO] Execute statement succeeded.")

    def _drop(self, stmt) -> StatementResult:
        kind = (stmt.ast.args.get("kind") or "TABLE").upper()
        if kind not in ("TABLE", "VIEW"):
            raise stmt.error(UnsupportedSqlError, f"DROP {kind} is not supported")
        self.catalog.drop(stmt.ast.this.sql(dialect="spark").replace("`", ""), kind, bool(stmt.ast.args.get("exists")))
        return StatementResult("ok", text="[INFO] Execute statement succeeded.")

    # -- jobs -------------------------------------------------------------------------------------
    def converter(self, stmt):
        """A Converter for ``stmt`` (its positions) in the current runtime mode."""
        from runtime.sql.converter import Converter

        return Converter(self.catalog, self.runtime_mode, stmt.position, self.local_time_zone)

    def plan(self, stmt) -> Node:
        """The logical plan of a query or INSERT, ending in its sink."""
        from runtime.sql import planning

        return planning.plan_statement(self, stmt)

    def _query(self, stmt) -> StatementResult:
        sink = self.plan(stmt)
        job = self.submit([sink], stmt.text)
        return StatementResult("job", [f.name for f in sink.input.fields], job=job, fields=list(sink.input.fields),
                               updating=sink.input.updating)

    def _insert(self, stmt) -> StatementResult:
        sink = self.plan(stmt)
        job = self.submit([sink], stmt.text)
        return StatementResult("job", ["job id"], [(job.job_id,)], job=job, text=f"[INFO] Submitted job {job.job_id}")

    def _statement_set(self, stmt) -> StatementResult:
        sinks = [self.plan(s) for s in stmt.inner]
        job = self.submit(sinks, stmt.text)
        return StatementResult("job", ["job id"], [(job.job_id,)], job=job, text=f"[INFO] Submitted job {job.job_id}")

    def _explain(self, stmt) -> StatementResult:
        inner = stmt.inner[0]
        if inner.kind not in ("query", "insert", "statement_set"):
            raise inner.error(UnsupportedSqlError, "EXPLAIN takes a query, an INSERT or a statement set")
        sinks = [self.plan(s) for s in (inner.inner if inner.kind == "statement_set" else [inner])]
        env = self.job_environment(sinks)
        return StatementResult("explain", ["plan"], text=explain.explain(sinks, env, inner, stmt.args.get("details")))

    def job_environment(self, sinks: list[Node]):
        """A fresh environment with the session's settings holding the operators of ``sinks``."""
        from runtime.api.environment import StreamExecutionEnvironment
        from runtime.sql.translator import Translator

        env = StreamExecutionEnvironment(self.env._client, {**self.env.config, **self.overrides})
        env.restore_from = self.env.restore_from
        translator = Translator(env, self.runtime_mode, self.catalog)
        for sink in sinks:
            translator.translate(sink)
        return env

    def submit(self, sinks: list[Node], text: str):
        """Translate ``sinks`` into one job and submit it, once the systems behind its tables said it can work;
        returns its JobClient (with the statement, which the job keeps too: the name is short, the statement is
        shown where there is room)."""
        from runtime.sql.planning import check_reachable

        check_reachable(self.catalog, sinks)
        env = self.job_environment(sinks)
        env.statement = text
        name = job_name(sinks, env.config.get("pipeline.name"))
        job = env.execute_async(name)
        job.statement, job.name = text, name
        self.env.last_job = job
        return job


def job_name(sinks: list[Node], configured: str | None = None) -> str:
    """A SQL job's name as Flink gives it: ``pipeline.name`` when set (``%%flink sql --name``, ``SET
    'pipeline.name' = '...'``), else ``insert-into_`` and the sink tables' full names for INSERTs and
    statement sets (``insert-into_default_catalog.default_database.counts``), else ``collect`` for a query."""
    if configured:
        return configured
    tables = [_qualified(s.target) for s in sinks if isinstance(s, Sink) and s.target != "collect"]
    return "insert-into_" + ",".join(tables) if tables else "collect"


def _qualified(table: str) -> str:
    """``counts`` as Flink's summary string of its identifier, ``default_catalog.default_database.counts``."""
    parts = [p.strip("`") for p in table.split(".")]
    return ".".join([CATALOG, DATABASE][:3 - len(parts)] + parts) if len(parts) < 3 else ".".join(parts)
