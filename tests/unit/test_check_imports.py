"""The import check of ``make lint`` (scripts/check_imports.py) on small trees of its own: it finds an import
that runs up a layer (also one inside a function), a circle (also one through ``if TYPE_CHECKING``), a
module in no layer, and a module of the TaskManager's package that reaches into the TaskManager; and on
this repository it finds nothing."""
from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("check_imports", ROOT / "scripts" / "check_imports.py")
check_imports = importlib.util.module_from_spec(spec)
spec.loader.exec_module(check_imports)


def tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in {"runtime/__init__.py": "", "kernel_magics/__init__.py": "", **files}.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


BASE = {"runtime/errors.py": "", "runtime/api/__init__.py": "", "runtime/sql/__init__.py": "",
        "runtime/taskmanager/__init__.py": ""}


def test_imports_that_run_down_pass(tmp_path):
    root = tree(tmp_path, {**BASE, "runtime/api/datastream.py": "from runtime import errors\n",
                           "runtime/sql/translator.py": "from runtime.api.datastream import x\n"})
    assert check_imports.problems(root) == []


def test_an_import_up_a_layer_fails_even_inside_a_function(tmp_path):
    root = tree(tmp_path, {**BASE, "runtime/sql/translator.py": "",
                           "runtime/api/datastream.py": "def f():\n    from runtime.sql import translator\n"})
    found = check_imports.problems(root)
    assert len(found) == 1 and found[0].startswith("runtime/api/datastream.py:2: imports runtime.sql.translator")


def test_a_circle_fails_even_through_type_checking_imports(tmp_path):
    root = tree(tmp_path, {**BASE, "runtime/api/datastream.py": "from runtime.api.environment import Env\n",
                           "runtime/api/environment.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                                         "    from runtime.api.datastream import DataStream\n"})
    assert check_imports.problems(root) == [
        "circle of 2 modules: runtime.api.datastream -> runtime.api.environment; "
        "runtime.api.environment -> runtime.api.datastream"]


def test_a_name_from_a_package_depends_on_its_init_and_a_submodule_on_the_submodule(tmp_path):
    root = tree(tmp_path, {**BASE, "runtime/api/__init__.py": "from runtime.api.windows import Tumble\n",
                           "runtime/api/windows.py": "from runtime.api import process\n",
                           "runtime/api/process.py": ""})
    assert check_imports.problems(root) == []
    root = tree(tmp_path, {"runtime/api/windows.py": "from runtime.api import Tumble\n"})
    assert [p for p in check_imports.problems(root) if p.startswith("circle")]


def test_a_module_in_no_layer_is_named(tmp_path):
    root = tree(tmp_path, {**BASE, "kernel_magics/x.py": "", "runtime/newpart/__init__.py": ""})
    assert check_imports.problems(root) == [
        "runtime/newpart/__init__.py: in no layer; add it to LAYERS in check_imports.py"]


def test_only_the_taskmanagers_own_module_reaches_into_it(tmp_path):
    root = tree(tmp_path, {**BASE, "runtime/taskmanager/task_manager.py": "class TaskManager:\n    pass\n",
                           "runtime/taskmanager/task.py": "from runtime.taskmanager.task_manager import TaskManager\n"
                                                          "class Task:\n    def __init__(self, tdd, tm):\n"
                                                          "        self.conf = self.tm.conf\n"})
    found = check_imports.problems(root)
    assert "runtime/taskmanager/task.py:1: imports the TaskManager; tasks use TaskServices" in found
    assert "runtime/taskmanager/task.py:3: takes the TaskManager as 'tm'" in found
    assert "runtime/taskmanager/task.py:4: reads tm.conf" in found


def test_this_repository_passes():
    assert check_imports.problems(ROOT) == []
