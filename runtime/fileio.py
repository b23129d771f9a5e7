"""Local files: written so that readers see all of it or none of it, and a cluster's working directory (where it
is, and tidied away once the cluster stops)."""
from __future__ import annotations

import json
import os
import shutil
import tempfile
from typing import Any

from runtime.config import Configuration


def working_dir(conf: Configuration) -> str:
    """The cluster's working directory on this host (token, logs, file HA, default checkpoints),
    created owner-only: ``cluster.working-dir``, else one per user under the system temp dir."""
    path = conf.get("cluster.working-dir") or os.path.join(tempfile.gettempdir(), f"flinkbench-{os.getuid()}")
    os.makedirs(path, mode=0o700, exist_ok=True)
    return path


def write_atomically(path: str, data: bytes | str, durable: bool = False) -> None:
    """Write ``data`` to a temporary file beside ``path`` and rename it over ``path``.

    Readers (another process polling the file) never see half a file. With ``durable`` the bytes
    reach the disk before the rename, so a crash leaves the old file or the new one, never an empty
    one. The temporary name carries the pid: two processes writing one path do not share it."""
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "wb") as fh:
        fh.write(data.encode() if isinstance(data, str) else data)
        if durable:
            fh.flush()
            os.fsync(fh.fileno())
    os.replace(tmp, path)


def write_json_atomically(path: str, value: Any, durable: bool = False) -> None:
    """:func:`write_atomically` for a JSON document."""
    write_atomically(path, json.dumps(value), durable)


def read_json(path: str) -> Any:
    """The JSON document at ``path``; None when there is none, or when it does not parse (written only by
    :func:`write_json_atomically`, so never half-written: a foreign file, treated as absent)."""
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except FileNotFoundError:
        return None
    except ValueError:
        return None


def tidy_working_dir(path: str, savepoints: str, problems: list[str]) -> str | None:
    """Remove a stopped cluster's working directory (logs, token, HA data, default checkpoints): one per cluster
    in the temp dir would otherwise pile up forever. Kept whole when ``problems`` says a process failed (its logs
    say why); savepoints taken into it stay, since a later cluster may start from them. Returns what was kept and
    why, None when nothing was."""
    if problems:
        return f"its folder {path} is kept for its logs: {'; '.join(problems)}"
    savepoints = os.path.abspath(savepoints.removeprefix("file://"))
    if not (savepoints.startswith(os.path.abspath(path) + os.sep) and _holds_files(savepoints)):
        shutil.rmtree(path, ignore_errors=True)
        return None
    _remove_all_but(os.path.abspath(path), savepoints)
    return f"its savepoints are kept in {savepoints}"


def _holds_files(path: str) -> bool:
    return any(files for _, _, files in os.walk(path))


def _remove_all_but(root: str, keep: str) -> None:
    """Remove everything under ``root`` except ``keep`` and the folders leading to it."""
    for entry in os.scandir(root):
        if entry.path == keep:
            continue
        if keep.startswith(entry.path + os.sep) and entry.is_dir(follow_symlinks=False):
            _remove_all_but(entry.path, keep)
        elif entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path, ignore_errors=True)
        else:
            os.remove(entry.path)
