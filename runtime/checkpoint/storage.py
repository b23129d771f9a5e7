"""Checkpoint storage at a URL: ``file://`` by default, any fsspec filesystem (``s3://`` and others).

Layout under ``state.checkpoints.dir``::

    <dir>/<job id>/chk-<n>/<vertex>-<subtask>/state.json   one subtask's snapshot: source offsets,
                                             /<op>.arrow    sink staging, keyed state as Arrow IPC
    <dir>/<job id>/chk-<n>/_metadata                        written last: the checkpoint is complete
    <dir>/<job id>/shared/<op>-<uuid>.arrow                 incremental checkpoints: key groups' rows that
                                                            any retained checkpoint's state.json refers to

With incremental checkpoints (``execution.checkpointing.incremental``) a ``state.json`` names, per
operator, the shared files holding its key groups and which key groups to take from each (a shared
file also holds rows of key groups a later checkpoint wrote anew). Savepoints are always full and
self-contained, in the same layout under ``state.savepoints.dir`` (``savepoint-<job>-<n>``), so a job
can start from either by pointing at the directory holding ``_metadata``.

The same URLs hold what a new JobManager leader needs of a job beyond its checkpoints (push logs and
collected rows under ``high-availability.storageDir``: runtime.ha.services.HaServices.job_data_dir),
written with :func:`write_durably` and listed with :func:`finished_names`.
"""
from __future__ import annotations

import json
import os
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from runtime.arrow_ipc import table_from_ipc, table_to_ipc
from runtime.checkpoint.fencing import guard
from runtime.errors import StorageError
from runtime.fileio import write_atomically
from runtime.keygroups import KEY_GROUP_COLUMN

__all__ = ["StorageError", "METADATA"]  # StorageError is raised here for every store

METADATA = "_metadata"


def _fs(url: str):
    import fsspec

    try:
        fs, path = fsspec.core.url_to_fs(url, **_options(url))
    except (ValueError, ImportError) as err:
        raise StorageError(f"checkpoint storage {url!r} is not usable: {err}") from None
    return fs, path


def _options(url: str) -> dict:
    """Connection options from the environment (an S3 endpoint for emulators and on-premise stores)."""
    if url.startswith("s3://") and os.environ.get("FLINKBENCH_S3_ENDPOINT"):
        return {"client_kwargs": {"endpoint_url": os.environ["FLINKBENCH_S3_ENDPOINT"]}}
    return {}


def join(base: str, *parts: str) -> str:
    """``base`` and ``parts`` joined with '/', for local paths and fsspec URLs alike."""
    return "/".join([base.rstrip("/"), *parts])


def normalise(url: str) -> str:
    """A plain path becomes a file:// URL so every place compares the same strings."""
    if "://" in url:
        return url.rstrip("/")
    return "file://" + os.path.abspath(url)


def write_bytes(url: str, data: bytes) -> None:
    """Write ``data`` at ``url`` (its directory made as needed); StorageError names the URL, FencedOut
    when the writer's fence refuses (runtime.checkpoint.fencing)."""
    guard("write", url)
    fs, path = _fs(url)
    try:
        fs.makedirs(parent(path), exist_ok=True)
        with fs.open(path, "wb") as fh:
            fh.write(data)
    except (OSError, PermissionError) as err:
        raise StorageError(f"cannot write {url}: {err}") from None
    except Exception as err:  # noqa: BLE001 - object stores raise their own error types
        raise StorageError(f"cannot write {url}: {type(err).__name__}: {err}") from None


def write_durably(url: str, data: bytes) -> None:
    """Write ``data`` at ``url`` whole or not at all, and durably: a local file is written under a temporary
    name, synced and renamed; an object store's put is atomic. StorageError (an OSError) names the URL;
    FencedOut (one too) when the writer's fence refuses (runtime.checkpoint.fencing)."""
    url = normalise(url)
    if url.startswith("file://"):
        guard("write", url)
        path = url[len("file://"):]
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            write_atomically(path, data, durable=True)
        except OSError as err:
            raise StorageError(f"cannot write {url}: {err}") from None
        return
    write_bytes(url, data)
def read_bytes(url: str) -> bytes:
    """The bytes at ``url``; StorageError names the URL."""
    fs, path = _fs(url)
    try:
        with fs.open(path, "rb") as fh:
            return fh.read()
    except FileNotFoundError:
        raise StorageError(f"no such checkpoint file: {url}") from None
    except Exception as err:  # noqa: BLE001
        raise StorageError(f"cannot read {url}: {type(err).__name__}: {err}") from None


def exists(url: str) -> bool:
    """Whether something is stored at ``url``."""
    fs, path = _fs(url)
    try:
        return fs.exists(path)
    except Exception:  # noqa: BLE001 - an unreachable store has nothing we can use
        return False


def is_directory(url: str) -> bool:
    """Whether ``url`` is a directory the store can list now: False while the store is out (unreachable,
    or something other than a directory where the directory should be)."""
    fs, path = _fs(url)
    try:
        fs.ls(path, detail=False)
        return bool(fs.isdir(path))
    except Exception:  # noqa: BLE001 - an unreachable store is the answer, not an error
        return False
def size(url: str) -> int:
    """Bytes stored at ``url``; StorageError names the URL."""
    fs, path = _fs(url)
    try:
        return int(fs.size(path))
    except Exception as err:  # noqa: BLE001 - object stores raise their own error types
        raise StorageError(f"cannot read the size of {url}: {type(err).__name__}: {err}") from None


def remove(url: str) -> None:
    """Delete a checkpoint directory; a missing one is fine. FencedOut when the fence refuses."""
    guard("delete", url)
    fs, path = _fs(url)
    try:
        if fs.exists(path):
            fs.rm(path, recursive=True)
    except FileNotFoundError:
        pass
    except Exception as err:  # noqa: BLE001
        raise StorageError(f"cannot delete {url}: {type(err).__name__}: {err}") from None


def remove_if_empty(url: str) -> None:
    """Delete the directory at ``url`` if nothing is in it (a missing one, or one that is not empty, stays
    as it is: a writer may be filling it). FencedOut when the fence refuses."""
    guard("delete-if-empty", url)
    fs, path = _fs(url)
    try:
        if fs.isdir(path) and not fs.ls(path, detail=False):
            fs.rmdir(path)
    except OSError:
        pass
    except Exception as err:  # noqa: BLE001
        raise StorageError(f"cannot delete {url}: {type(err).__name__}: {err}") from None


def parent(url: str) -> str:
    """The directory holding ``url`` (a URL or a store's path)."""
    return url.rstrip("/").rsplit("/", 1)[0]


def list_dirs(url: str) -> list[str]:
    """The names of the directories directly under ``url``, as the store has them now (object stores' clients
    cache listings: a listing read before a write would not show it)."""
    fs, path = _fs(url)
    fs.invalidate_cache(path)
    try:
        return sorted(p.rsplit("/", 1)[-1] for p in fs.ls(path, detail=False))
    except FileNotFoundError:
        return []


def finished_names(url: str) -> list[str]:
    """The names under ``url`` (none if it does not exist), leaving out files write_durably has not finished."""
    return [n for n in list_dirs(url) if not n.endswith(".tmp")]


def write_json(url: str, value: Any) -> int:
    """Write ``value`` as JSON at ``url``; returns the size written."""
    data = json.dumps(value).encode()
    write_bytes(url, data)
    return len(data)


def read_json(url: str) -> Any:
    """The JSON document at ``url``; StorageError when it is missing or malformed."""
    try:
        return json.loads(read_bytes(url))
    except ValueError as err:
        raise StorageError(f"{url} is not valid JSON: {err}") from None


def locations(checkpoints_dir: str, savepoints_dir: str, working_dir: str) -> tuple[str, str]:
    """Where checkpoints and savepoints go (``state.checkpoints.dir``, ``state.savepoints.dir``): by default
    ``<working dir>/checkpoints`` and ``<checkpoints>/savepoints``, as URLs."""
    base = normalise(checkpoints_dir or os.path.join(working_dir, "checkpoints"))
    return base, normalise(savepoints_dir or join(base, "savepoints"))


def checkpoint_dir(base: str, job_id: str, checkpoint_id: int) -> str:
    """Where checkpoint ``checkpoint_id`` of a job lives: ``<base>/<job>/chk-<id>``, as in Flink."""
    return join(normalise(base), job_id, f"chk-{checkpoint_id}")


def savepoint_dir(base: str, job_id: str, checkpoint_id: int) -> str:
    """Where a savepoint of a job goes: ``<base>/savepoint-<job id's first 6>-<id>``, as in Flink."""
    return join(normalise(base), f"savepoint-{job_id[:6]}-{checkpoint_id}")


def job_shared_dir(base: str, job_id: str) -> str:
    """Where a job's incremental checkpoints keep the files several of them refer to: ``<base>/<job>/shared``."""
    return join(normalise(base), job_id, "shared")


def shared_dir(checkpoint_directory: str) -> str:
    """The shared directory beside a checkpoint's ``<base>/<job>/chk-<n>`` (the one job_shared_dir names)."""
    return join(parent(checkpoint_directory), "shared")


SharedRefs = dict[str, dict[str, list[int]]]  # operator id -> shared file URL -> the key groups to take from it


def write_subtask_state(directory: str, name: str, meta: dict, tables: dict[str, pa.Table],
                        shared: SharedRefs | None = None) -> tuple[str, int]:
    """Write one subtask's snapshot under ``directory/name`` (``shared``: the shared files its keyed state
    is in, already written); returns (pointer, bytes written)."""
    pointer = join(directory, name)
    size = 0
    files = {}
    for op_id, table in tables.items():
        data = table_to_ipc(table)
        write_bytes(join(pointer, f"{op_id}.arrow"), data)
        files[op_id] = f"{op_id}.arrow"
        size += len(data)
    size += write_json(join(pointer, "state.json"), {**meta, "tables": files, **({"shared": shared} if shared else {})})
    return pointer, size


def read_subtask_state(pointer: str) -> tuple[dict, dict[str, list[pa.Table]]]:
    """One subtask's snapshot from its pointer: its metadata and its tables by name (one table of its own
    per name, or with incremental checkpoints one per shared file it refers to)."""
    meta = read_json(join(pointer, "state.json"))
    tables = {op_id: [table_from_ipc(read_bytes(join(pointer, name)))] for op_id, name in meta.get("tables", {}).items()}
    for op_id, files in meta.get("shared", {}).items():
        tables.setdefault(op_id, []).extend(read_key_groups(url, key_groups) for url, key_groups in files.items())
    return meta, tables


def read_key_groups(url: str, key_groups: list[int]) -> pa.Table:
    """The rows of ``key_groups`` in a shared file (its other rows belong to other checkpoints)."""
    table = table_from_ipc(read_bytes(url))
    column = table.column(KEY_GROUP_COLUMN)
    return table.filter(pc.is_in(column, value_set=pa.array(key_groups).cast(column.type)))
