"""The SQL layer's place among the modules: no import runs back up into the TaskManager, the JobManager or
the notebook side, runtime.changelog (row kinds, Row) imports nothing of Flinkbench, and every public
function and class of runtime/sql and the Table API says what it is for."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
SQL_MODULES = sorted((ROOT / "runtime" / "sql").glob("*.py")) + sorted((ROOT / "runtime" / "table").glob("*.py"))
ABOVE = ("runtime.taskmanager", "runtime.jobmanager", "kernel_magics")


def imported(path: Path) -> set[str]:
    """Every module ``path`` imports, at the top or inside functions."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return found


@pytest.mark.parametrize("path", SQL_MODULES, ids=lambda p: p.name)
def test_sql_and_table_api_import_nothing_above_them(path):
    upward = sorted(m for m in imported(path) if m.startswith(ABOVE))
    assert not upward, f"{path.relative_to(ROOT)} imports {upward}"


def test_row_kinds_sit_below_everything():
    assert not [m for m in imported(ROOT / "runtime" / "changelog.py") if m.split(".")[0] in ("runtime", "kernel_magics")]


def test_the_sql_layer_imports_nothing_of_the_table_api_above_it():
    for path in sorted((ROOT / "runtime" / "sql").glob("*.py")):
        assert not [m for m in imported(path) if m.startswith("runtime.table")], path.name


def _undocumented(path: Path) -> list[str]:
    tree = ast.parse(path.read_text())
    missing = []

    def visit(body, prefix: str, documented_bases: set[str]):
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not node.name.startswith("_"):
                if ast.get_docstring(node) is None and node.name not in documented_bases:
                    missing.append(f"{prefix}{node.name}")
            elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                if ast.get_docstring(node) is None:
                    missing.append(node.name)
                inherited = set().union(*(documented.get(b.id, set()) for b in node.bases if isinstance(b, ast.Name)))
                documented[node.name] = inherited | {f.name for f in node.body if isinstance(f, ast.FunctionDef)
                                                     and ast.get_docstring(f)}
                visit(node.body, f"{node.name}.", inherited)

    documented: dict[str, set[str]] = {}
    visit(tree.body, "", set())
    return missing


@pytest.mark.parametrize("path", SQL_MODULES + [ROOT / "runtime" / "changelog.py"], ids=lambda p: p.name)
def test_public_functions_have_docstrings(path):
    """An override of a documented base method (a plan node's ``describe``) keeps the base's docstring."""
    assert not _undocumented(path), f"{path.relative_to(ROOT)}: no docstring on {_undocumented(path)}"
