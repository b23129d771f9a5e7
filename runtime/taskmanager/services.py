"""What a task may ask of the TaskManager it runs in: :class:`TaskServices`, and the TaskManager's own.

A task (runtime.taskmanager.task), its source loop and its connectors see the TaskManager only through
this narrow gateway, never through the TaskManager's fields: they send to and ask the JobManager, hand
blocking work to the process's thread pools, publish their result partitions on the data port and open
input gates to their producers, and use the process's Spark session once it is up. Everything a task
needs to run is here, so its whole life (deploy, restore, barriers, notifications, cancel, failure) is
unit-tested against a small double of it, with no process, socket or Spark session
(tests/unit/taskmanager/task_services.py).

All methods are called on the TaskManager's loop except :meth:`TaskServices.request`, which connector
code calls from a worker thread (it blocks that thread, never the loop).
"""
from __future__ import annotations

import asyncio
import ssl
from collections.abc import Awaitable, Callable
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from runtime.checkpoint.fencing import UploadFence, UploadingTaskManager, WriteFence
from runtime.config import Configuration
from runtime.ids import ExecutionAttemptId, JobVertexId
from runtime.messages import ProducerLocation
from runtime.taskmanager.input_gate import InputGate
from runtime.taskmanager.network import DataServer, ResultPartition
from runtime.taskmanager.python_environment import PythonEnvironments
from runtime.taskmanager.spark import SparkRunner
from runtime.taskmanager.spark_work import SparkWorkRecorder

T = TypeVar("T")

REQUEST_TIMEOUT_S = 30.0  # how long a task waits for the JobManager's answer (a push source's next rows)


class TaskServices(Protocol):
    """The TaskManager as its tasks see it (Flink hands its tasks a similar set of services)."""

    @property
    def conf(self) -> Configuration:
        """The TaskManager's configuration (bundle sizes, network credits)."""
        ...

    @property
    def spark(self) -> SparkRunner:
        """The process's Spark session and the plans run on it; usable once :meth:`spark_ready` returned."""
        ...

    @property
    def spark_work(self) -> SparkWorkRecorder:
        """Where a task's Spark jobs are tagged with the subtask, and its stages taken with each metrics report."""
        ...

    async def spark_ready(self) -> None:
        """Wait until the Spark session is up, and warmed up if a warm-up is running (a task beside it would
        compete for the same JVM's one-time work); raises what stopped the session from starting. Cancelling
        one waiting task leaves the start (shared by every task) going."""
        ...

    @property
    def python_environments(self) -> PythonEnvironments:
        """Where the jobs' shipped Python files and packages are made ready on this TaskManager, once per job."""
        ...

    def send(self, message: Any) -> None:
        """One message to the JobManager over the control connection (kept for the next one if none is up)."""
        ...

    def request(self, message: Any, timeout: float = REQUEST_TIMEOUT_S) -> Any:
        """Blocking, from a worker thread: send ``message`` and return the JobManager's reply.
        ConnectionError when not connected or with no answer within ``timeout`` seconds."""
        ...

    def run_blocking(self, fn: Callable[[], T]) -> Awaitable[T]:
        """``fn()`` on the task threads (Spark actions, operators' merges)."""
        ...

    def run_io(self, fn: Callable[[], T]) -> Awaitable[T]:
        """``fn()`` on the checkpoint upload threads, so that a slow store never holds up processing."""
        ...

    def upload_fence(self, attempt_id: ExecutionAttemptId, checkpoint_id: int,
                     cancelled: Callable[[], bool]) -> WriteFence | None:
        """What an upload of ``attempt_id``'s snapshot for ``checkpoint_id`` asks before each file it writes
        (runtime.checkpoint.fencing.UploadFence): it is refused once the attempt is ``cancelled()``, this
        TaskManager follows another leader session, or the leader may have declared it lost."""
        ...

    def register_partition(self, partition: ResultPartition) -> None:
        """Serve ``partition`` on this TaskManager's data port (consumers ask for it by attempt id)."""
        ...

    def unregister_partition(self, partition: ResultPartition) -> None:
        ...

    async def connect_inputs(self, producers: list[ProducerLocation], subpartition: int,
                             consumer: ExecutionAttemptId, vertex: JobVertexId | None = None) -> InputGate:
        """An input gate reading ``subpartition`` of every producer (its output to ``vertex``, the consumer's, when
        a producer feeds several), connected (with the cluster token and the internal TLS of data clients);
        ConnectionError naming a producer it cannot reach."""
        ...


class JobManagerLink(UploadingTaskManager, Protocol):
    """The TaskManager's control connection to the leading JobManager, as far as tasks use it: the leader
    session it follows and how long the leader has not heard it are what upload fences read."""

    def send(self, message: Any) -> None: ...

    def request_blocking(self, message: Any, timeout: float) -> Any: ...


@dataclass
class TaskManagerServices:
    """The real :class:`TaskServices`: the TaskManager's pools, data port and Spark session, and its
    control connection to the JobManager."""
    conf: Configuration
    spark: SparkRunner
    executor: Executor
    io_executor: Executor
    data_server: DataServer
    token: str
    data_client_ssl: ssl.SSLContext | None
    jobmanager: JobManagerLink
    python_environments: PythonEnvironments
    spark_started: asyncio.Future | None = field(default=None)  # set when the TaskManager starts its session
    spark_warmed: asyncio.Future | None = field(default=None)  # set when it warms the session up (never raises)
    spark_work: SparkWorkRecorder = field(init=False)  # each subtask's Spark stages (runtime.taskmanager.spark_work)

    def __post_init__(self) -> None:
        self.spark_work = SparkWorkRecorder(self.spark.keeper.current, self.executor)

    async def spark_ready(self) -> None:
        if self.spark_started is None:
            raise RuntimeError("this TaskManager has not started its Spark session")
        await asyncio.shield(self.spark_started)
        if self.spark_warmed is not None:
            await asyncio.shield(self.spark_warmed)

    def send(self, message: Any) -> None:
        self.jobmanager.send(message)

    def request(self, message: Any, timeout: float = REQUEST_TIMEOUT_S) -> Any:
        return self.jobmanager.request_blocking(message, timeout)

    def run_blocking(self, fn: Callable[[], T]) -> Awaitable[T]:
        return asyncio.get_running_loop().run_in_executor(self.executor, fn)

    def upload_fence(self, attempt_id: ExecutionAttemptId, checkpoint_id: int,
                     cancelled: Callable[[], bool]) -> WriteFence | None:
        return UploadFence.of(attempt_id, checkpoint_id, self.jobmanager, cancelled)

    def run_io(self, fn: Callable[[], T]) -> Awaitable[T]:
        return asyncio.get_running_loop().run_in_executor(self.io_executor, fn)

    def register_partition(self, partition: ResultPartition) -> None:
        self.data_server.register(partition)

    def unregister_partition(self, partition: ResultPartition) -> None:
        self.data_server.unregister(partition)

    async def connect_inputs(self, producers: list[ProducerLocation], subpartition: int,
                             consumer: ExecutionAttemptId, vertex: JobVertexId | None = None) -> InputGate:
        gate = InputGate(producers, subpartition, consumer, self.token, self.conf.get("taskmanager.network.credits"),
                         self.data_client_ssl, vertex)
        await gate.connect()
        return gate
