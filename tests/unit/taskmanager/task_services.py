"""A TaskServices double (runtime.taskmanager.services): a task's whole life runs against it with no
process, socket or Spark session.

It records what the task sends, runs blocking work inline on the loop (deterministic) and uploads on a
thread (fenced as a TaskManager's are, by a leader session and a heartbeat lease the test can set), keeps
registered result partitions in a dict, and hands out input gates whose channels are
fed in memory by the test (:class:`InputFeed`) through the gate's real framing and credit code.
"""
from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import pyarrow as pa

from runtime.arrow_ipc import table_from_b64, table_to_ipc
from runtime.checkpoint.fencing import UploadFence, WriteFence
from runtime.config import Configuration
from runtime.ids import ExecutionAttemptId, JobVertexId
from runtime.data_messages import DataBuffer
from runtime.messages import CollectResult, ProducerLocation, TaskStateChanged
from runtime.states import ExecutionState
from runtime.taskmanager.spark_work import SparkWorkRecorder
from runtime.taskmanager.heartbeat_lease import HeartbeatLease
from runtime.taskmanager.input_gate import InputGate
from runtime.taskmanager.network import ResultPartition, write_frame
from runtime.taskmanager.python_environment import PythonEnvironments

T = TypeVar("T")


class ArrowOnlySpark:
    """Stands in for the SparkRunner where nothing runs in Spark: a 'DataFrame' is the Arrow table itself,
    so a chain with no stateless operators passes it through unchanged."""

    def from_arrow(self, table: pa.Table) -> pa.Table:
        return table

    def task_failed(self) -> None:
        pass


class _IntoReader:
    """The producer's end of an in-memory channel: frames written here are read by the gate."""

    def __init__(self, reader: asyncio.StreamReader):
        self.reader = reader

    def write(self, data: bytes) -> None:
        self.reader.feed_data(data)

    async def drain(self) -> None:
        pass


class _CreditsBack:
    """The consumer's end going back to the producer: the credits the gate grants, counted."""

    def __init__(self):
        self.frames, self.closed = 0, False

    def write(self, data: bytes) -> None:
        self.frames += 1

    async def drain(self) -> None:
        pass

    def close(self) -> None:
        self.closed = True

    def is_closing(self) -> bool:
        return self.closed


class InputFeed:
    """The producers of one task's input gate, played by the test: ``await feed.send(channel, item)``."""

    def __init__(self, gate: InputGate):
        self.gate = gate
        self.readers: list[asyncio.StreamReader] = []

    async def send(self, channel: int, item: pa.Table | Any) -> None:
        """A table (as the exchange sends it: Arrow IPC against a credit) or an event on ``channel``."""
        writer = _IntoReader(self.readers[channel])
        if isinstance(item, pa.Table):
            payload = table_to_ipc(item)
            await write_frame(writer, DataBuffer(item.num_rows, len(payload)), payload)  # type: ignore[arg-type]
        else:
            await write_frame(writer, item)  # type: ignore[arg-type]


class TestingTaskServices:
    """The TaskManager as a task sees it, with nothing behind it."""
    __test__ = False  # not a test class, whatever pytest thinks of its name

    def __init__(self, conf: Configuration | None = None, spark: Any = None,
                 answer: Callable[[Any], Any] | None = None):
        self.conf = conf or Configuration({})
        self.spark = spark if spark is not None else ArrowOnlySpark()
        self.answer = answer
        self.spark_failure: BaseException | None = None  # what the Spark session's start raises, if set
        self.sent: list[Any] = []
        self.partitions: dict[ExecutionAttemptId, ResultPartition] = {}
        self.registered: list[ResultPartition] = []
        self.feeds: list[InputFeed] = []
        self.message_arrived = asyncio.Event()
        self.leader_session_id = "session-1"  # the leader this TaskManager follows (upload fences read it)
        self.heartbeats = HeartbeatLease()  # how long that leader has not heard it
        self.spark_work = SparkWorkRecorder(lambda: None, None)  # no Spark driver to read: records nothing
        self.python_environments = PythonEnvironments("/nonexistent/python")  # jobs here ship no Python files

    async def spark_ready(self) -> None:
        if self.spark_failure is not None:
            raise self.spark_failure

    def send(self, message: Any) -> None:
        self.sent.append(message)
        self.message_arrived.set()

    def request(self, message: Any, timeout: float = 30.0) -> Any:
        if self.answer is None:
            raise ConnectionError(f"cannot send {type(message).__name__}: no JobManager in this test")
        return self.answer(message)

    async def run_blocking(self, fn: Callable[[], T]) -> T:
        return fn()

    def run_io(self, fn: Callable[[], T]) -> Awaitable[T]:
        return asyncio.get_running_loop().run_in_executor(None, fn)

    def upload_fence(self, attempt_id: ExecutionAttemptId, checkpoint_id: int,
                     cancelled: Callable[[], bool]) -> WriteFence | None:
        return UploadFence.of(attempt_id, checkpoint_id, self, cancelled)

    def register_partition(self, partition: ResultPartition) -> None:
        self.partitions[partition.attempt_id] = partition
        self.registered.append(partition)

    def unregister_partition(self, partition: ResultPartition) -> None:
        self.partitions.pop(partition.attempt_id, None)

    async def connect_inputs(self, producers: list[ProducerLocation], subpartition: int,
                             consumer: ExecutionAttemptId, vertex: JobVertexId | None = None) -> InputGate:
        gate = InputGate(producers, subpartition, consumer, "token", vertex=vertex)
        feed = InputFeed(gate)
        for channel in range(len(producers)):
            reader = asyncio.StreamReader()
            feed.readers.append(reader)
            gate.attach(channel, reader, _CreditsBack())  # type: ignore[arg-type]
        self.feeds.append(feed)
        return gate

    # -- what the task said ---------------------------------------------------------------------
    def of_type(self, kind: type) -> list:
        return [m for m in self.sent if isinstance(m, kind)]

    def states(self) -> list[ExecutionState]:
        return [m.state for m in self.of_type(TaskStateChanged)]

    def collected(self, checkpoint_id: Any = "any") -> list[dict]:
        """The rows the task's collect sink sent, in order (those tagged with ``checkpoint_id`` if given)."""
        return [row for m in self.of_type(CollectResult) if checkpoint_id == "any" or m.checkpoint_id == checkpoint_id
                for row in table_from_b64(m.arrow_b64).to_pylist()]

    async def until(self, condition: Callable[[], Any], timeout: float = 5.0) -> Any:
        """Wait until ``condition()`` holds of what was sent (re-checked at each message); its value."""
        async def holds():
            while not (value := condition()):
                self.message_arrived.clear()
                await self.message_arrived.wait()
            return value
        return await asyncio.wait_for(holds(), timeout)
