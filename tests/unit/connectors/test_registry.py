"""The connector registry: one entry per connector, found by operator name and by SQL identifier, with
registration explicit (no connector module imports the registry back)."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from runtime.connectors import registry
from runtime.connectors.base import ConnectorContext, ConnectorError
from runtime.connectors.table_options import ConfigOption, TableFactory, TableOptionError, UnsupportedTableOption

ROOT = Path(__file__).resolve().parents[3]


class Table:
    """A table as a factory sees it (what runtime.sql.catalog.TableDef offers)."""
    def __init__(self, options: dict, columns=(("a", "INT"),), primary_key=()):
        self.name, self.options = "t", options
        self.physical = [type("C", (), {"name": n, "type": t, "nullable": True})() for n, t in columns]
        self.primary_key, self.partition_keys = list(primary_key), []

    def column(self, name):
        return next((c for c in self.physical if c.name == name), None)


def context(params: dict) -> ConnectorContext:
    return ConnectorContext("op", "Source: x", 0, 1, params, None, lambda m: None, "job", "attempt", "streaming",
                            lambda fn, *a: fn(*a))


def test_every_connector_is_listed_once_with_its_reader_writer_and_table_factory():
    names = [c.name for c in registry.CONNECTORS]
    assert len(names) == len(set(names))
    assert {"datagen", "files", "print", "blackhole", "collect", "push", "collection"} <= set(names)
    assert {"datagen", "filesystem", "print", "blackhole"} <= set(registry.TABLE_FACTORIES)
    assert registry.BY_NAME["files"].reader is not None and registry.BY_NAME["files"].writer is not None


def test_an_unknown_connector_is_refused_naming_the_operator_and_the_known_ones():
    with pytest.raises(ConnectorError, match=r"source 'Source: x': unknown connector 'kafka', expected one of \["):
        registry.source_reader(context({"connector": "kafka"}))
    with pytest.raises(ConnectorError, match="unknown connector 'print'"):  # print writes, it does not read
        registry.source_reader(context({"connector": "print"}))


def test_a_table_without_a_known_connector_is_refused():
    with pytest.raises(TableOptionError, match="has no 'connector' option"):
        registry.table_factory(Table({}))
    with pytest.raises(UnsupportedTableOption, match="connector 'kafka' is not available here"):
        registry.table_factory(Table({"connector": "kafka"}))


def test_the_shared_checks_name_table_option_and_value():
    class Factory(TableFactory):
        identifier = "demo"
        required = (ConfigOption("url", str, description="where it is"),)
        optional = (ConfigOption("batch", int, 10),)

    factory = Factory()
    with pytest.raises(TableOptionError, match="table 't': unsupported option 'bath' for connector 'demo' "
                                               r"\(supported: batch, url\)"):
        factory.check(Table({"connector": "demo", "url": "x", "bath": "1"}))
    with pytest.raises(TableOptionError, match="the demo connector needs a 'url' option \\(where it is\\)"):
        factory.check(Table({"connector": "demo"}))
    table = Table({"connector": "demo", "url": "x", "batch": "many"})
    factory.check(table)
    with pytest.raises(TableOptionError, match="table 't': option 'batch' must be an integer, got 'many'"):
        factory.get(table, Factory.optional[0])
    assert factory.get(Table({"connector": "demo", "url": "x"}), Factory.optional[0]) == 10


def test_connector_modules_do_not_import_the_registry():
    for path in sorted((ROOT / "runtime" / "connectors").rglob("*.py")):
        if path.name == "registry.py":
            continue
        tree = ast.parse(path.read_text())
        modules = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
        modules |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        assert "runtime.connectors.registry" not in modules, f"{path.relative_to(ROOT)} imports the registry"


def test_a_missing_postgresql_client_is_one_error_naming_the_extra(monkeypatch):
    import sys

    from runtime.connectors import postgres

    monkeypatch.setitem(sys.modules, "psycopg", None)  # an import of it now fails, as where it is not installed
    with pytest.raises(postgres.PostgresError, match=r"need the PostgreSQL client psycopg.*pip install "
                                                     r"'flinkbench\[postgres\]'"):
        postgres.psycopg()
