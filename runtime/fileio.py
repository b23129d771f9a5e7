"""Writing a local file so that readers see all of it or none of it: one helper for every such file."""
from __future__ import annotations

import json
import os
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
