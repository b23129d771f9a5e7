"""Key groups: the unit in which keyed state is partitioned, checkpointed and rescaled.

A key hashes to one of ``max_parallelism`` key groups; key groups map to subtasks in contiguous
ranges (Flink's formula), so a job restored at another parallelism hands whole key groups to new
owners. The key group itself is computed inside Spark as ``pmod(xxhash64(key columns), max_parallelism)``
(:data:`KEY_GROUP_SQL`), so every process agrees on it without Python hashing.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

KEY_GROUP_COLUMN = "__key_group"


def key_group_sql(keys: list[str], max_parallelism: int) -> str:
    """Spark SQL expression giving the key group of each row."""
    cols = ", ".join(f"`{k}`" for k in keys)
    return f"pmod(xxhash64({cols}), {int(max_parallelism)})"


def operator_index_for_key_group(key_group, max_parallelism: int, parallelism: int):
    """Subtask that owns ``key_group`` (works on ints and numpy arrays)."""
    return key_group * parallelism // max_parallelism


def channels_for_key_groups(key_groups: np.ndarray, max_parallelism: int, parallelism: int) -> np.ndarray:
    """The consumer subtask of each key group: contiguous ranges, as Flink assigns them."""
    return operator_index_for_key_group(np.asarray(key_groups, dtype=np.int64), max_parallelism, parallelism)


@dataclass(frozen=True)
class KeyGroupRange:
    """Inclusive range of key groups owned by one subtask."""
    start: int
    end: int

    @classmethod
    def for_operator(cls, max_parallelism: int, parallelism: int, index: int) -> KeyGroupRange:
        if not 0 <= index < parallelism <= max_parallelism:
            raise ValueError(f"subtask {index} of {parallelism} does not fit max parallelism {max_parallelism}")
        start = (index * max_parallelism + parallelism - 1) // parallelism
        end = ((index + 1) * max_parallelism - 1) // parallelism
        return cls(start, end)

    def __contains__(self, key_group: int) -> bool:
        return self.start <= key_group <= self.end

    def __iter__(self):
        return iter(range(self.start, self.end + 1))
