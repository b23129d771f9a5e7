"""HA storage: the data a new leader needs to carry on a job where its predecessor stopped.

It lives under ``<high-availability.storageDir>/<cluster-id>/jobs/<job>/`` (``file://`` or any fsspec
URL, such as ``s3://``), written before it is acknowledged::

    push/<source>/epoch                 which log positions count in (runtime.jobmanager.push)
    push/<source>/<first offset>.arrow  each batch of pushed rows, named by its first row's offset
    push/<source>/closed                the source takes no more rows
    results/<offset>.<subtask>.<checkpoint>.<sink>.arrow
                                        each collect delivery (runtime.jobmanager.collect)

Writes are whole or absent: a local file is written under a temporary name and renamed; an object
store's put is atomic. The job's directory goes when the job ends.
"""
from __future__ import annotations

import os

from runtime.checkpoint import storage
from runtime.checkpoint.fencing import guard
from runtime.fileio import write_atomically

join = storage.join
normalise = storage.normalise


def write(url: str, data: bytes) -> None:
    """Write ``data`` at ``url`` whole or not at all. StorageError (an OSError) names the URL; FencedOut (one
    too) when the writer's fence refuses (runtime.checkpoint.fencing)."""
    url = normalise(url)
    if url.startswith("file://"):
        guard("write", url)
        path = url[len("file://"):]
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            write_atomically(path, data, durable=True)
        except OSError as err:
            raise storage.StorageError(f"cannot write {url}: {err}") from None
        return
    storage.write_bytes(url, data)


def read(url: str) -> bytes:
    return storage.read_bytes(url)


def names(url: str) -> list[str]:
    """The names in the directory ``url`` (none if it does not exist), without unfinished writes."""
    return [n for n in storage.list_dirs(url) if not n.endswith(".tmp")]


def exists(url: str) -> bool:
    return storage.exists(url)


def remove(url: str) -> None:
    """Delete ``url`` and everything under it; a missing one is fine."""
    storage.remove(url)
