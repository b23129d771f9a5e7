"""A job's Python dependencies on one TaskManager: unpacked and installed once, then on the Python path of the
TaskManager (which loads the job's functions) and of its Spark workers (which run them).

Each job's shipped files and archives (runtime.python_dependencies) unpack into a folder of their own under
the TaskManager's folder (``<cluster working dir>/python/<TaskManager id>/job-<digest>``: ``files/`` holds the
files and folders of ``python.files``, ``<target_dir>/`` each archive); its requirements are installed with the
TaskManager's own interpreter (``pip install --target``) into a folder named by the requirements' digest, so
jobs (and restarts) that list the same requirements install them once. Every subtask of the job that lands on
the TaskManager asks; the first does the work, the others wait for it.

Spark's workers get the same folders through Spark itself (``SparkContext.addArchive``: a zip of each folder,
unpacked by Spark where its workers run, on a Spark cluster too); the functions' code loads only after the
workers put them on their path (runtime.taskmanager.spark_functions.Deferred). Runs on the task's executor
thread (``prepare`` blocks on unzipping and pip).
"""
from __future__ import annotations

import io
import os
import shutil
import subprocess
import threading
import zipfile
from dataclasses import dataclass

from runtime.errors import SubmissionError
from runtime.python_dependencies import (REQUIREMENTS, PythonDependencies, extract, pip_install, pip_message,
                                         unpacked)
from runtime.taskmanager.spark_functions import Deferred, Shipped, activate

INSTALL_TIMEOUT_S = 900


class DependencyError(SubmissionError):
    """A job's Python dependencies cannot be made ready on this TaskManager (pip's message, or the file)."""


@dataclass(frozen=True)
class JobPythonEnvironment:
    """Where a job's dependencies are on this TaskManager: folders on the Python path, the archives' folder
    (the working directory of the job's functions in Spark), and what Spark ships to its workers: (zip, alias)
    pairs and, per alias, the folders inside it that go on the workers' path."""
    paths: tuple[str, ...]
    archives_dir: str | None
    spark_archives: tuple[tuple[str, str], ...]
    worker_paths: tuple[tuple[str, str], ...]  # (alias, folder inside it)
    worker_cwd: str | None  # the alias whose folder the functions run in (archives), or None

    @property
    def key(self) -> str:
        return "+".join(alias for _, alias in self.spark_archives)


class PythonEnvironments:
    """The jobs' Python environments of one TaskManager, each made once (``root``: its own folder)."""

    def __init__(self, root: str):
        self.root = root
        self._ready: dict[str, JobPythonEnvironment] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

    def remove(self) -> None:
        """Delete this TaskManager's folder (it stops; a killed one leaves it to the cluster's working dir)."""
        shutil.rmtree(self.root, ignore_errors=True)

    def prepare(self, dependencies: PythonDependencies | None) -> JobPythonEnvironment | None:
        """The job's environment, made now if this TaskManager has not made it; DependencyError if it cannot be."""
        if dependencies is None:
            return None
        key = f"{dependencies.digest}-{dependencies.requirements_digest}"
        with self._guard:
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:
            if key not in self._ready:
                self._ready[key] = self._make(dependencies)
            environment = self._ready[key]
        activate(environment.paths)
        return environment

    def _make(self, dependencies: PythonDependencies) -> JobPythonEnvironment:
        paths, spark, worker, cwd, archives_dir = [], [], [], None, None
        if dependencies.files or dependencies.archives:
            job_dir = os.path.join(self.root, f"job-{dependencies.digest}")
            alias = f"flinkbench-job-{dependencies.digest}"
            if not os.path.isdir(job_dir):
                _unpack(dependencies, job_dir)
            for folder in _path_folders(job_dir, dependencies):
                paths.append(os.path.join(job_dir, folder))
                worker.append((alias, folder))
            spark.append((_zipped(job_dir), alias))
            if dependencies.archives:
                archives_dir, cwd = job_dir, alias
        if dependencies.requirements.strip():
            site = self._installed(dependencies)
            alias = f"flinkbench-requirements-{dependencies.requirements_digest}"
            paths.append(site)
            spark.append((_zipped(site), alias))
            worker.append((alias, "."))
        return JobPythonEnvironment(tuple(paths), archives_dir, tuple(spark), tuple(worker), cwd)

    def _installed(self, dependencies: PythonDependencies) -> str:
        """The folder pip installed the requirements into (installed now unless it was before)."""
        site = os.path.join(self.root, f"requirements-{dependencies.requirements_digest}")
        if os.path.isdir(site):
            return site
        partial = site + ".partial"
        shutil.rmtree(partial, ignore_errors=True)
        os.makedirs(partial)
        listed = os.path.join(partial, ".requirements.txt")
        with open(listed, "w", encoding="utf-8") as f:
            f.write(dependencies.requirements)
        cached = extract(dependencies.cached_packages, partial + ".cached") if dependencies.cached_packages else None
        done = subprocess.run(pip_install(listed, partial, cached), capture_output=True, text=True,
                              timeout=INSTALL_TIMEOUT_S, check=False)
        if done.returncode != 0:
            shutil.rmtree(partial, ignore_errors=True)
            raise DependencyError(f"{REQUIREMENTS}: pip could not install them on this TaskManager:\n{pip_message(done)}")
        os.remove(listed)
        os.rename(partial, site)
        return site


def _unpack(dependencies: PythonDependencies, job_dir: str) -> None:
    partial = job_dir + ".partial"
    shutil.rmtree(partial, ignore_errors=True)
    files = os.path.join(partial, "files")
    os.makedirs(files)
    for shipped in dependencies.files:
        extract(shipped, files)
    for archive in dependencies.archives:
        target = os.path.join(partial, archive.target)
        os.makedirs(target, exist_ok=True)
        with zipfile.ZipFile(io.BytesIO(unpacked(archive))) as zipped:
            zipped.extractall(target)
    os.rename(partial, job_dir)


def _path_folders(job_dir: str, dependencies: PythonDependencies) -> list[str]:
    """The job folder's folders on the Python path (relative to it): ``files`` (its modules and packages), each
    shipped folder that is no package (its modules), and each archive's folder."""
    folders = ["files"]
    for shipped in dependencies.files:
        inner = os.path.join(job_dir, "files", shipped.name)
        if os.path.isdir(inner) and not os.path.exists(os.path.join(inner, "__init__.py")):
            folders.append(os.path.join("files", shipped.name))
    return folders + [archive.target for archive in dependencies.archives]


def _zipped(folder: str) -> str:
    """A zip of ``folder``'s contents beside it (made once), for Spark to ship to its workers."""
    archive = folder + ".zip"
    if not os.path.exists(archive):
        made = shutil.make_archive(folder + ".partial", "zip", folder)
        os.rename(made, archive)
    return archive


def for_workers(function, environment: JobPythonEnvironment | None):
    """What an operator hands Spark for ``function`` when its job ships dependencies: its code deferred until the
    worker has the job's folders on its path (SQL's function wrappers keep their names and types at hand)."""
    if environment is None or function is None:
        return function
    from runtime.taskmanager import spark_functions, spark_udfs

    spark_functions.ship_by_value()  # what the deferred code refers to of flinkbench travels with it
    spark_udfs.ship_by_value()
    if isinstance(function, dict):
        return {name: _for_workers_one(f, environment) for name, f in function.items()}
    return _for_workers_one(function, environment)


def _for_workers_one(function, environment: JobPythonEnvironment):
    from runtime.udf import UserDefinedFunctionWrapper

    if isinstance(function, tuple):  # a SQL scalar function: (wrapper, result type, called without arguments)
        return (_for_workers_one(function[0], environment), *function[1:])
    if isinstance(function, UserDefinedFunctionWrapper):
        return Shipped(function, environment.worker_paths, environment.worker_cwd)
    if callable(function):
        return Deferred(function, environment.worker_paths, environment.worker_cwd)
    return function
