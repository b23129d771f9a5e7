"""What a checkpoint coordinator writes and deletes, each operation in a worker thread under the job's
fence (runtime.checkpoint.fencing): a JobManager that lost its leadership, or that woke up from a pause
longer than its lease, has every one of them refused before it touches a file.

Deletions are quiet: one that fails (or is refused) is logged and leaves its debris for the sweep at the
job's end. Writing ``_metadata`` reports how it went: a refused or failed write fails its checkpoint.
"""
from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable

from runtime.checkpoint import storage
from runtime.checkpoint.fencing import WriteFence, run_fenced
from runtime.checkpoint.lifecycle_events import CompletedCheckpoint, SubtaskSnapshot
from runtime.errors import CheckpointError

log = logging.getLogger(__name__)


def load_checkpoint(path: str) -> CompletedCheckpoint:
    """A completed checkpoint or savepoint from its directory (the one holding ``_metadata``).

    Raises StorageError when it cannot be read, CheckpointError when its metadata is malformed."""
    directory = storage.normalise(path)
    meta = storage.read_json(storage.join(directory, storage.METADATA))
    try:
        subtasks = [SubtaskSnapshot(**s) for s in meta["subtasks"]]
        return CompletedCheckpoint(meta["checkpoint_id"], meta["timestamp"], meta["is_savepoint"], directory,
                                   subtasks, 0.0, sum(s.size for s in subtasks))
    except (KeyError, TypeError) as err:
        raise CheckpointError(f"{directory} has malformed checkpoint metadata ({err!r})") from None


class CheckpointFiles:
    """One job's checkpoint files as its coordinator changes them; called on the JobManager's loop, each
    operation runs in the default executor with ``fence`` guarding it (None: unfenced, no HA)."""

    def __init__(self, fence: WriteFence | None):
        self.fence = fence

    def _run(self, fn: Callable, *args) -> asyncio.Future:
        return asyncio.get_running_loop().run_in_executor(None, run_fenced, self.fence, fn, *args)

    async def write_metadata(self, done: CompletedCheckpoint, job_id: str, max_parallelism: int) -> None:
        """Write ``_metadata``: the checkpoint is restorable from then on. StorageError (FencedOut too) if not."""
        await self._run(storage.write_json, storage.join(done.directory, storage.METADATA),
                        done.metadata(job_id, max_parallelism))

    def remove(self, directory: str) -> None:
        self._run(_remove_quietly, directory)

    def discard_state(self, pointer: str, checkpoint_ended: bool) -> None:
        """A late or stray subtask snapshot; the directory of a checkpoint that ended goes with its last one."""
        self._run(_discard_state, pointer, checkpoint_ended)

    def remove_all(self, urls: Iterable[str]) -> None:
        self._run(_remove_all_quietly, tuple(urls))

    def sweep(self, job_dir: str, shared_dir: str, keep: set[str]) -> None:
        """Remove every ``chk-*`` directory of the job and every shared file not in ``keep``."""
        def remove_stale() -> None:
            stale = [storage.join(job_dir, name) for name in _listing(job_dir) if name.startswith("chk-")]
            stale += [storage.join(shared_dir, name) for name in _listing(shared_dir)]
            _remove_all_quietly([url for url in stale if url not in keep])
        self._run(remove_stale)


def _remove_quietly(directory: str, remove: Callable[[str], None] = storage.remove) -> None:
    try:
        remove(directory)
    except storage.StorageError as err:
        log.warning("could not remove %s: %s", directory, err)


def _discard_state(pointer: str, checkpoint_ended: bool) -> None:
    _remove_quietly(pointer)
    if checkpoint_ended:
        _remove_quietly(storage.parent(pointer), storage.remove_if_empty)


def _remove_all_quietly(urls: Iterable[str]) -> None:
    for url in urls:
        _remove_quietly(url)


def _listing(directory: str) -> list[str]:
    """The names under ``directory``; none when the store cannot be listed (it keeps its debris)."""
    try:
        return storage.list_dirs(directory)
    except Exception as err:  # noqa: BLE001 - an unreachable store leaves its debris
        log.warning("cannot list %s: %s", directory, err)
        return []
