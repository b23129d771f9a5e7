"""The data channel between TaskManagers: the header of each frame (runtime.taskmanager.network frames them).

A consumer's first frame asks a producer for one subpartition (PartitionRequest, with the cluster token);
the producer sends DataBuffer headers, each followed by an Arrow IPC payload of ``size`` bytes, against the
credit the consumer grants (AddCredit), and events in order with the data: watermarks, checkpoint
barriers and the end of the partition. The control channel's messages are in runtime.messages.
"""
from __future__ import annotations

from dataclasses import dataclass

from runtime.codec import wire
from runtime.ids import ExecutionAttemptId, JobVertexId


@wire
@dataclass
class PartitionRequest:
    """First frame a consumer sends: which producer attempt and subpartition it reads, and its token; the consumer's
    vertex tells apart the outputs of a producer that feeds several vertices (a source read once for many)."""
    token: str
    producer: ExecutionAttemptId
    subpartition: int
    consumer: ExecutionAttemptId
    initial_credit: int
    consumer_vertex: JobVertexId | None = None


@wire
@dataclass
class PartitionRequestRejected:
    reason: str


@wire
@dataclass
class AddCredit:
    credit: int


@wire
@dataclass
class DataBuffer:
    rows: int
    size: int


@wire
@dataclass
class Watermark:
    timestamp: float
    idle: bool = False  # the sender has no data for now: leave it out of the minimum


@wire
@dataclass
class CheckpointBarrier:
    checkpoint_id: int
    timestamp: float
    is_savepoint: bool = False
    target: str = ""  # where each task writes its snapshot
    stop: bool = False
    drain: bool = False  # each task advances its watermark to +infinity before it snapshots
    full: bool = False  # incremental checkpoints: upload every key group, refer to no earlier checkpoint


@wire
@dataclass
class EndOfPartition:
    pass
