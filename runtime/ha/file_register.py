"""A compare-and-set register on a shared directory: numbered versions, each created once, never a lock.

File HA keeps what its JobManagers must agree on (the lease and every fenced entry) in one JSON
document. A lock around its read-modify-write would let a holder that stops (a long GC pause, a frozen
VM, SIGSTOP) hold every other JobManager back for as long as it stays stopped, the standby that should
replace it included. Here nobody waits on anybody: a writer reads the current version ``n``, prepares
its document and creates version ``n + 1``, which the file system lets exactly one writer do
(``os.link`` of a fully written temporary file fails with EEXIST when the name exists). A writer that
was stopped between its read and its link finds ``n + 1`` taken and must read again: whatever it
decided on the old version is never applied over a newer one. Readers take the highest version.

Layout: ``<directory>/<n, 12 digits>.json``; temporary files start with a dot. A writer that created a
version removes all but the newest :data:`KEEP_VERSIONS` (a reader that listed the directory long before
it reads finds its version gone and lists again), and temporary files older than :data:`STALE_TMP_S`
(left by a writer killed between writing and linking). Blocking calls, any thread.
"""
from __future__ import annotations

import contextlib
import json
import os
import time
import uuid

KEEP_VERSIONS = 16
STALE_TMP_S = 60.0
READ_ATTEMPTS = 10  # listings in a row whose newest version vanished before it was read


class FileRegister:
    """The versions under ``directory``; version 0 is the empty document ``{}``."""

    def __init__(self, directory: str):
        self.directory = directory
        os.makedirs(directory, exist_ok=True)

    def read(self) -> tuple[int, dict]:
        """The newest version and its document. OSError if the directory cannot be read."""
        for _ in range(READ_ATTEMPTS):
            version = self.newest()
            if version == 0:
                return 0, {}
            try:
                with open(self._path(version), encoding="utf-8") as fh:
                    return version, json.load(fh)
            except FileNotFoundError:
                continue  # removed by a writer far ahead of this reader: list again
        raise OSError(f"{self.directory}: the newest version kept vanishing before it could be read")

    def newest(self) -> int:
        return max(self._versions(), default=0)

    def compare_and_set(self, version: int, document: dict) -> bool:
        """Create version ``version + 1`` holding ``document``: True if this call created it, False if
        another writer had (the caller reads again and decides again). Durable before it is visible."""
        tmp = os.path.join(self.directory, f".{os.getpid()}.{uuid.uuid4().hex}.tmp")
        try:
            with open(tmp, "w", encoding="utf-8") as fh:
                json.dump(document, fh)
                fh.flush()
                os.fsync(fh.fileno())
            try:
                os.link(tmp, self._path(version + 1))
            except FileExistsError:
                return False
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.remove(tmp)
        self._sync_directory()
        self._tidy(version + 1)
        return True

    def _versions(self) -> list[int]:
        return [int(name[:-5]) for name in os.listdir(self.directory)
                if name.endswith(".json") and name[:-5].isdigit()]

    def _path(self, version: int) -> str:
        return os.path.join(self.directory, f"{version:012d}.json")

    def _sync_directory(self) -> None:
        fd = os.open(self.directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    def _tidy(self, created: int) -> None:
        """Old versions and stale temporary files go; another writer tidying at once is no harm."""
        for version in self._versions():
            if version <= created - KEEP_VERSIONS:
                with contextlib.suppress(FileNotFoundError):
                    os.remove(self._path(version))
        oldest = time.time() - STALE_TMP_S
        for entry in os.scandir(self.directory):
            if entry.name.startswith(".") and entry.name.endswith(".tmp"):
                with contextlib.suppress(FileNotFoundError):
                    if entry.stat().st_mtime < oldest:
                        os.remove(entry.path)
