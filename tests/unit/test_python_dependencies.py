"""A job's Python dependencies without a cluster: what the client packs from PyFlink's keys (files, folders,
archives, requirements), the errors that name the key and path, the CLI's -pyfs/-pyarch/-pyreq, and how a
TaskManager unpacks them once into folders on its path (forgetting an earlier job's module of the same name)."""
import argparse
import sys
import zipfile

import pytest

from runtime.api.environment import StreamExecutionEnvironment
from runtime.cli.jobs import python_settings
from runtime.errors import SubmissionError
from runtime.python_dependencies import collect
from runtime.taskmanager.python_environment import PythonEnvironments


@pytest.fixture
def shipped(tmp_path):
    (tmp_path / "one.py").write_text("VALUE = 'one'\n")
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("NAME = 'pkg'\n")
    modules = tmp_path / "loose"
    modules.mkdir()
    (modules / "two.py").write_text("VALUE = 'two'\n")
    with zipfile.ZipFile(tmp_path / "data.zip", "w") as archive:
        archive.writestr("table.csv", "a,b\n")
    return tmp_path


def test_pyflinks_methods_set_the_keys_and_the_job_graph_carries_the_bytes(shipped):
    env = StreamExecutionEnvironment()
    env.add_python_file(str(shipped / "one.py"))
    env.add_python_file(str(shipped / "pkg"))
    env.add_python_file(str(shipped / "pkg"))  # once
    env.add_python_archive(str(shipped / "data.zip"), "data")
    assert env.config["python.files"] == f"{shipped}/one.py,{shipped}/pkg"
    assert env.config["python.archives"] == f"{shipped}/data.zip#data"
    dependencies = collect(env.config)
    assert [p.name for p in dependencies.files] == ["one.py", "pkg"]
    assert [(a.name, a.target) for a in dependencies.archives] == [("data.zip", "data")]
    assert collect({}) is None


@pytest.mark.parametrize("config, words", [
    ({"python.files": "/no/such/file.py"}, "python.files: no file or folder '/no/such/file.py'"),
    ({"python.archives": "{shipped}/one.py"}, "is not a zip archive"),
    ({"python.requirements": "/no/requirements.txt"}, "python.requirements: cannot read '/no/requirements.txt'"),
])
def test_a_path_that_cannot_be_read_is_named_with_its_key(shipped, config, words):
    with pytest.raises(SubmissionError, match=words):
        collect({k: v.format(shipped=shipped) for k, v in config.items()})


def test_the_cli_flags_are_the_keys_with_absolute_paths(shipped, monkeypatch):
    monkeypatch.chdir(shipped)
    args = argparse.Namespace(py_files="one.py,pkg", py_archives="data.zip#data", py_requirements="req.txt#cache")
    assert python_settings(args) == {"python.files": f"{shipped}/one.py,{shipped}/pkg",
                                     "python.archives": f"{shipped}/data.zip#data",
                                     "python.requirements": f"{shipped}/req.txt#{shipped}/cache"}


def test_a_taskmanager_unpacks_a_job_once_into_folders_on_its_path(shipped, tmp_path_factory):
    dependencies = collect({"python.files": f"{shipped}/one.py,{shipped}/pkg,{shipped}/loose",
                            "python.archives": f"{shipped}/data.zip#data"})
    environments = PythonEnvironments(str(tmp_path_factory.mktemp("tm")))
    first = environments.prepare(dependencies)
    try:
        assert environments.prepare(dependencies) is first
        files = first.paths[0]
        assert first.paths == (files, f"{files}/loose", f"{first.archives_dir}/data")
        assert open(f"{first.archives_dir}/data/table.csv").read() == "a,b\n"
        import one
        import pkg
        import two

        assert (one.VALUE, pkg.NAME, two.VALUE) == ("one", "pkg", "two")
        assert [alias for _, alias in first.spark_archives] == [f"flinkbench-job-{dependencies.digest}"]
        assert {folder for _, folder in first.worker_paths} == {"files", "files/loose", "data"}
    finally:
        for path in first.paths:
            sys.path.remove(path)
        for name in ("one", "pkg", "two"):
            sys.modules.pop(name, None)


def test_a_module_an_earlier_job_shipped_under_the_same_name_is_forgotten(tmp_path_factory):
    roots = []
    for value in ("first", "second"):
        folder = tmp_path_factory.mktemp(value)
        (folder / "flinkbench_same_name.py").write_text(f"VALUE = {value!r}\n")
        roots.append(folder)
    environments = PythonEnvironments(str(tmp_path_factory.mktemp("tm")))
    seen = []
    try:
        for folder in roots:
            environments.prepare(collect({"python.files": f"{folder}/flinkbench_same_name.py"}))
            import flinkbench_same_name

            seen.append(flinkbench_same_name.VALUE)
    finally:
        sys.path[:] = [p for p in sys.path if "/job-" not in p]
        sys.modules.pop("flinkbench_same_name", None)
    assert seen == ["first", "second"]
