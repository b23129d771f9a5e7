"""Which consumer subtask gets which rows of a producer's output: forward, broadcast, rebalance, hash."""
from __future__ import annotations

import itertools
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from runtime.keygroups import KEY_GROUP_COLUMN, channels_for_key_groups

if TYPE_CHECKING:
    from runtime.taskmanager.network import ResultPartition


def split_for_output(table: pa.Table, partitioning: str, num_consumers: int, own_index: int,
                     max_parallelism: int, partition: ResultPartition | None = None) -> dict[int, pa.Table]:
    """Which consumer subtask gets which rows of ``table``."""
    if table.num_rows == 0:
        return {}
    if partitioning == "forward":
        return {own_index: table}
    if partitioning == "broadcast":
        return {i: table for i in range(num_consumers)}
    if partitioning == "rebalance":
        counter = partition.round_robin if partition is not None else itertools.count()
        return {next(counter) % num_consumers: table}
    if partitioning == "hash":
        if KEY_GROUP_COLUMN not in table.column_names:
            raise ValueError(f"hash partitioning needs the {KEY_GROUP_COLUMN} column")
        channels = channels_for_key_groups(table.column(KEY_GROUP_COLUMN).to_numpy(), max_parallelism, num_consumers)
        out = {}
        for channel in np.unique(channels):
            out[int(channel)] = table.filter(pa.array(channels == channel))
        return out
    raise ValueError(f"unknown partitioning {partitioning!r}")
