"""What a job ships for its Python functions: files, archives and a requirements list, as PyFlink ships them.

The client reads PyFlink's keys (``python.files``, ``python.archives``, ``python.requirements``; set by
``add_python_file``, ``add_python_archive``, ``set_python_requirements``, ``-pyfs``/``-pyarch``/``-pyreq``
or ``%flink add-file``) and packs what they name into the job graph itself (:class:`PythonDependencies`):
the JobManager keeps the graph in its HA store, so a restarted or failed-over job ships the same bytes to
whichever TaskManagers run it (runtime.taskmanager.python_environment unpacks and installs them there).
A requirement that pip cannot resolve fails the submission with pip's own message (:func:`check_requirements`).
"""
from __future__ import annotations

import base64
import hashlib
import io
import os
import subprocess
import sys
import zipfile
from dataclasses import dataclass, field

from runtime.codec import wire
from runtime.errors import SubmissionError

FILES, ARCHIVES, REQUIREMENTS = "python.files", "python.archives", "python.requirements"
MAX_BYTES = 32 * 1024 * 1024  # base64 in a job graph: one REST request and one deploy message (64 MB) each
RESOLVE_TIMEOUT_S = 600


@wire
@dataclass
class ShippedPath:
    """One file, folder or archive, zipped (``data``: base64); ``target``: the folder an archive unpacks into."""
    name: str
    data: str
    target: str = ""


@wire
@dataclass
class PythonDependencies:
    files: list[ShippedPath] = field(default_factory=list)
    archives: list[ShippedPath] = field(default_factory=list)
    requirements: str = ""  # the requirements file's text
    cached_packages: ShippedPath | None = None  # packages to install from (set_python_requirements' cached dir)

    @property
    def digest(self) -> str:
        """What identifies the shipped bytes (a job folder is made once per digest)."""
        parts = [p.data for p in self.files] + [p.target + p.data for p in self.archives]
        return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:16]

    @property
    def requirements_digest(self) -> str:
        """What identifies an installation of the requirements (shared by the jobs that list the same)."""
        cached = self.cached_packages.data if self.cached_packages else ""
        return hashlib.sha256(f"{sys.version_info[:2]}\0{self.requirements}\0{cached}".encode()).hexdigest()[:16]


def collect(config: dict[str, str]) -> PythonDependencies | None:
    """The dependencies ``config``'s python.* keys name, read and packed; None if it names none.
    SubmissionError names the key and the path that cannot be read."""
    files = [_pack(FILES, path) for path in _listed(config.get(FILES))]
    archives = []
    for item in _listed(config.get(ARCHIVES)):
        path, _, target = item.partition("#")
        if not zipfile.is_zipfile(path):
            raise SubmissionError(f"{ARCHIVES}: {path!r} is not a zip archive" if os.path.exists(path) else
                                  f"{ARCHIVES}: no file {path!r}")
        with open(path, "rb") as f:
            archives.append(ShippedPath(os.path.basename(path), _b64(f.read()), _target(target or path)))
    requirements, cached = "", None
    if config.get(REQUIREMENTS):
        path, _, cached_dir = config[REQUIREMENTS].partition("#")
        requirements = _read_text(REQUIREMENTS, path)
        cached = _pack(REQUIREMENTS, cached_dir) if cached_dir else None
    if not (files or archives or requirements):
        return None
    found = PythonDependencies(files, archives, requirements, cached)
    size = sum(len(p.data) for p in [*files, *archives, *([cached] if cached else [])]) * 3 // 4
    if size > MAX_BYTES:
        raise SubmissionError(f"the job's Python dependencies are {size / 2**20:.0f} MB, more than a job graph carries "
                              f"({MAX_BYTES // 2**20} MB): list large packages in {REQUIREMENTS} instead")
    return found


def _listed(value: str | None) -> list[str]:
    return [v.strip() for v in (value or "").split(",") if v.strip()]


def _target(name: str) -> str:
    """The folder an archive unpacks into: the one given, else the archive's own file name (as PyFlink has it)."""
    target = os.path.basename(name.rstrip("/"))
    if not target or target in (".", ".."):
        raise SubmissionError(f"{ARCHIVES}: {name!r} names no folder to unpack into")
    return target


def _read_text(key: str, path: str) -> str:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError as err:
        raise SubmissionError(f"{key}: cannot read {path!r}: {err.strerror or err}") from None


def _pack(key: str, path: str) -> ShippedPath:
    """A file or folder as a zip of itself (a folder's contents under its own name)."""
    if not os.path.exists(path):
        raise SubmissionError(f"{key}: no file or folder {path!r}")
    buffer = io.BytesIO()
    name = os.path.basename(os.path.abspath(path))
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zipped:
        if os.path.isfile(path):
            zipped.write(path, name)
        for root, dirs, names in os.walk(path):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for each in sorted(names):
                full = os.path.join(root, each)
                zipped.write(full, os.path.join(name, os.path.relpath(full, path)))
    return ShippedPath(name, _b64(buffer.getvalue()))


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def unpacked(path: ShippedPath) -> bytes:
    return base64.b64decode(path.data)


_resolved: set[str] = set()  # requirement texts this process has resolved already


def check_requirements(dependencies: PythonDependencies | None) -> None:
    """Resolve the requirements as the TaskManagers will install them (pip, without installing): SubmissionError
    with pip's own message when a requirement cannot be had, before the job is submitted."""
    if dependencies is None or not dependencies.requirements.strip():
        return
    key = dependencies.requirements_digest
    if key in _resolved:
        return
    import tempfile

    with tempfile.TemporaryDirectory(prefix="flinkbench-requirements-") as folder:
        listed = os.path.join(folder, "requirements.txt")
        with open(listed, "w", encoding="utf-8") as f:
            f.write(dependencies.requirements)
        cached = extract(dependencies.cached_packages, folder) if dependencies.cached_packages else None
        command = pip_install(listed, os.path.join(folder, "target"), cached)
        done = subprocess.run([*command, "--dry-run", "--ignore-installed"], capture_output=True, text=True,
                              timeout=RESOLVE_TIMEOUT_S, check=False)
    if done.returncode != 0:
        raise SubmissionError(f"{REQUIREMENTS}: pip cannot install them:\n{pip_message(done)}")
    _resolved.add(key)


def pip_install(requirements: str, target: str, find_links: str | None) -> list[str]:
    """The pip command that installs ``requirements`` into ``target`` with this interpreter (a TaskManager's own)."""
    command = [sys.executable, "-m", "pip", "install", "--disable-pip-version-check", "--no-input", "--quiet",
               "--target", target, "-r", requirements]
    return command + (["--find-links", find_links] if find_links else [])


def pip_message(done: subprocess.CompletedProcess) -> str:
    """What pip said about its failure: its ERROR lines, else its last lines."""
    lines = [line for line in (done.stderr or "").splitlines() + (done.stdout or "").splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("ERROR")]
    return "\n".join(errors or lines[-10:]) or f"pip exited with {done.returncode}"


def extract(path: ShippedPath, folder: str) -> str:
    """Unzip ``path`` into ``folder``; the folder (or file) it makes."""
    with zipfile.ZipFile(io.BytesIO(unpacked(path))) as zipped:
        zipped.extractall(folder)
    return os.path.join(folder, path.name)
