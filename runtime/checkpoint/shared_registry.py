"""Which checkpoints refer to each shared file of incremental checkpoints, so a file is deleted exactly
when the last checkpoint referring to it is dropped or fails (Flink's SharedStateRegistry).

Pure: the checkpoint lifecycle feeds it what subtasks acknowledged and which checkpoints went away,
and turns the files it returns into deletions. References are counted per checkpoint id, so a
checkpoint registering the same file twice, or released twice, changes nothing.
"""
from __future__ import annotations

from collections.abc import Iterable


class SharedStateRegistry:
    """Shared file URL -> the ids of the checkpoints (retained or in flight) that refer to it."""

    def __init__(self) -> None:
        self._users: dict[str, set[int]] = {}

    def register(self, checkpoint_id: int, uploaded: Iterable[str], reused: Iterable[str]) -> list[str]:
        """``checkpoint_id`` refers to the files a subtask ``uploaded`` for it and those it ``reused`` from
        an earlier checkpoint. Returns the reused files that are no longer kept (deleted once no
        checkpoint referred to them): the checkpoint cannot be restored and must fail."""
        for url in uploaded:
            self._users.setdefault(url, set()).add(checkpoint_id)
        missing = []
        for url in reused:
            users = self._users.get(url)
            if users is None:
                missing.append(url)
            else:
                users.add(checkpoint_id)
        return missing

    def release(self, checkpoint_id: int) -> list[str]:
        """``checkpoint_id`` was dropped or failed: the files no checkpoint refers to any more, to delete."""
        unused = []
        for url, users in list(self._users.items()):
            users.discard(checkpoint_id)
            if not users:
                del self._users[url]
                unused.append(url)
        return sorted(unused)

    def live(self) -> set[str]:
        """Every file some checkpoint refers to (what a sweep of the shared directory keeps)."""
        return set(self._users)
