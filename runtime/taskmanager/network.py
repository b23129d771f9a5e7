"""Data exchange between TaskManagers: Arrow IPC record batches over TCP, with credit-based flow control.

A producer subtask writes into a :class:`ResultPartition` with one subpartition per consumer subtask.
Each consumer's :class:`InputGate` connects to the :class:`DataServer` of every producer's TaskManager
and asks for its subpartition (PartitionRequest, carrying the cluster token). A buffer is sent only
against credit the consumer granted; a subpartition holding ``max_buffered`` unsent buffers makes
``emit`` wait. That wait is backpressure, and it keeps memory bounded however slow the consumer is.
Events (watermarks, checkpoint barriers, end of partition) travel in order with the data and need
no credit.

Frames: 4-byte big-endian header length, the header (runtime.messages via runtime.codec), and for
DataBuffer a payload of ``size`` bytes holding one Arrow IPC stream. All of it runs on the
TaskManager's asyncio loop. This module holds the framing and the producer side; the consumer side
is runtime.taskmanager.input_gate.
"""
from __future__ import annotations

import asyncio
import collections
import itertools
import logging
import ssl
import struct
import time
from typing import Any

import pyarrow as pa

from runtime.arrow_ipc import table_to_ipc
from runtime.codec import WireError, decode, encode
from runtime.data_messages import (AddCredit, CheckpointBarrier, DataBuffer, EndOfPartition, PartitionRequest,
                                   PartitionRequestRejected, Watermark)
from runtime.ids import ExecutionAttemptId, JobVertexId
from runtime.security import tokens_match

log = logging.getLogger(__name__)

HEADER = struct.Struct(">I")
MAX_HEADER_BYTES = 1 << 20
MAX_PAYLOAD_BYTES = 1 << 30
PRODUCER_WAIT_S = 30.0
CONNECT_DEADLINE_S = 60.0
LINGER_S = 10.0
BACKPRESSURE_WINDOW_S = 5.0

Event = Watermark | CheckpointBarrier | EndOfPartition


# ---------------------------------------------------------------------------------------------
# Framing, shared by both ends
# ---------------------------------------------------------------------------------------------
async def write_frame(writer: asyncio.StreamWriter, header: Any, payload: bytes = b"") -> None:
    """Send one frame: the header's length, the header, and a DataBuffer's payload."""
    encoded = encode(header).encode()
    writer.write(HEADER.pack(len(encoded)) + encoded)
    if payload:
        writer.write(payload)
    await writer.drain()


async def read_frame(reader: asyncio.StreamReader) -> tuple[Any, bytes]:
    """One frame; raises WireError for malformed input and IncompleteReadError at end of stream."""
    (length,) = HEADER.unpack(await reader.readexactly(HEADER.size))
    if length > MAX_HEADER_BYTES:
        raise WireError(f"frame header of {length} bytes exceeds {MAX_HEADER_BYTES}")
    header: Any = decode(await reader.readexactly(length))
    payload = b""
    if isinstance(header, DataBuffer):
        if not 0 <= header.size <= MAX_PAYLOAD_BYTES:
            raise WireError(f"data buffer of {header.size} bytes is out of range")
        payload = await reader.readexactly(header.size)
    return header, payload


# ---------------------------------------------------------------------------------------------
# Producer side
# ---------------------------------------------------------------------------------------------
class _Subpartition:
    """Unsent buffers and events for one consumer, and the credit that consumer granted."""

    def __init__(self, max_buffered: int):
        self.queue: collections.deque[tuple[Any, bytes, int]] = collections.deque()
        self.max_buffered = max_buffered
        self.credit = 0
        self.buffered = 0
        self.changed = asyncio.Event()
        self.records = 0
        self.bytes = 0
        self.attached = False

    def has_sendable(self) -> bool:
        if not self.queue:
            return False
        head = self.queue[0][0]
        return not isinstance(head, DataBuffer) or self.credit > 0


class ResultPartition:
    """The output of one producer subtask, split into one subpartition per consumer subtask."""

    def __init__(self, attempt_id: ExecutionAttemptId, num_subpartitions: int, max_buffered: int = 4,
                 downstream: JobVertexId | None = None):
        self.attempt_id = attempt_id
        self.downstream = downstream  # the consuming vertex: a producer with several outputs has one partition each
        self.subpartitions = [_Subpartition(max_buffered) for _ in range(num_subpartitions)]
        self._blocked_spans: collections.deque[tuple[float, float]] = collections.deque()
        self.created = time.monotonic()
        self._waiting_since: float | None = None
        self.blocked_s = 0.0  # every wait for credit since creation (backpressured time)
        self.round_robin = itertools.count()

    async def emit(self, subpartition: int, table: pa.Table) -> None:
        """Queue a table for one consumer, waiting while that consumer is ``max_buffered`` behind."""
        sub = self.subpartitions[subpartition]
        if sub.buffered >= sub.max_buffered:
            self._waiting_since = started = time.monotonic()
            try:
                while sub.buffered >= sub.max_buffered:
                    sub.changed.clear()
                    await sub.changed.wait()
            finally:
                self._waiting_since = None
            self.blocked_s += (waited := time.monotonic() - started)
            self._blocked_spans.append((started, started + waited))
        payload = table_to_ipc(table)
        sub.queue.append((DataBuffer(table.num_rows, len(payload)), payload, table.num_rows))
        sub.buffered += 1
        sub.records += table.num_rows
        sub.bytes += len(payload)
        sub.changed.set()

    async def emit_partitioned(self, tables: dict[int, pa.Table]) -> None:
        for index, table in tables.items():
            await self.emit(index, table)

    async def broadcast_event(self, event: Event) -> None:
        for sub in self.subpartitions:
            sub.queue.append((event, b"", 0))
            sub.changed.set()

    async def drained(self, timeout: float | None = None) -> None:
        """Wait until every subpartition has sent everything (used before reporting FINISHED)."""
        async def all_sent():
            for sub in self.subpartitions:
                while sub.queue:
                    sub.changed.clear()
                    await sub.changed.wait()
        await asyncio.wait_for(all_sent(), timeout)

    def backpressure_ratio(self) -> float:
        """Share of the last few seconds this producer spent waiting for consumers."""
        now = time.monotonic()
        window_start = max(now - BACKPRESSURE_WINDOW_S, self.created)
        while self._blocked_spans and self._blocked_spans[0][1] < window_start:
            self._blocked_spans.popleft()
        blocked = sum(end - max(start, window_start) for start, end in self._blocked_spans)
        blocked += self._current_block(now, window_start)
        span = now - window_start
        return min(1.0, blocked / span) if span > 0 else 0.0

    def blocked_seconds(self) -> float:
        """Seconds spent waiting for consumers since creation, the wait under way included."""
        return self.blocked_s + self._current_block(time.monotonic(), self.created)

    def _current_block(self, now: float, window_start: float) -> float:
        if self._waiting_since is None:
            return 0.0
        return now - max(self._waiting_since, window_start)

    def records_by_subpartition(self) -> dict[str, int]:
        return {str(i): s.records for i, s in enumerate(self.subpartitions)}

    async def serve(self, index: int, credit: int, reader: asyncio.StreamReader,
                    writer: asyncio.StreamWriter) -> None:
        """Send subpartition ``index`` to a connected consumer until EndOfPartition or disconnect."""
        sub = self.subpartitions[index]
        if sub.attached:
            raise WireError(f"subpartition {index} of {self.attempt_id} already has a consumer")
        sub.attached, sub.credit = True, credit
        credits = asyncio.get_running_loop().create_task(self._read_credits(sub, reader))
        try:
            while True:
                while not sub.has_sendable():
                    if credits.done():
                        return
                    sub.changed.clear()
                    await sub.changed.wait()
                header, payload, _ = sub.queue.popleft()
                if isinstance(header, DataBuffer):
                    sub.credit -= 1
                    sub.buffered -= 1
                sub.changed.set()
                await write_frame(writer, header, payload)
                if isinstance(header, EndOfPartition):
                    await _until_consumer_closes(credits)
                    return
        finally:
            credits.cancel()

    @staticmethod
    async def _read_credits(sub: _Subpartition, reader: asyncio.StreamReader) -> None:
        try:
            while True:
                message, _ = await read_frame(reader)
                if isinstance(message, AddCredit):
                    sub.credit += message.credit
                    sub.changed.set()
        except (asyncio.IncompleteReadError, ConnectionError, WireError):
            sub.changed.set()


async def _until_consumer_closes(credits: asyncio.Task) -> None:
    """After the last frame, let the consumer close first (for at most LINGER_S). Closing with its late
    credits unread would make the kernel answer with a reset, and a reset may discard what the consumer
    has not read yet, EndOfPartition included: its task would fail with "lost input"."""
    try:
        await asyncio.wait_for(asyncio.shield(credits), LINGER_S)
    except asyncio.TimeoutError:
        log.debug("consumer did not close its data connection within %s s of the end of partition", LINGER_S)


class DataServer:
    """A TaskManager's data port (mutual TLS with security.ssl.internal.enabled): serves registered subpartitions."""

    def __init__(self, host: str, port: int, token: str, ssl_context: ssl.SSLContext | None = None):
        self.host, self.requested_port, self.token, self.ssl = host, port, token, ssl_context
        self.partitions: dict[tuple[ExecutionAttemptId, JobVertexId | None], ResultPartition] = {}
        self._registered = asyncio.Condition()
        self._server: asyncio.base_events.Server | None = None
        self.port = 0

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._handle, self.host, self.requested_port, ssl=self.ssl)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        if self._server:
            self._server.close()
            await self._server.wait_closed()

    def register(self, partition: ResultPartition) -> None:
        self.partitions[(partition.attempt_id, partition.downstream)] = partition
        asyncio.get_running_loop().create_task(self._notify())

    def unregister(self, partition: ResultPartition) -> None:
        self.partitions.pop((partition.attempt_id, partition.downstream), None)

    def _find(self, attempt_id: ExecutionAttemptId, downstream: JobVertexId | None) -> ResultPartition | None:
        """The partition a request names: the producer's output to the consumer's vertex (any, if it names none)."""
        found = self.partitions.get((attempt_id, downstream))
        if found is None and downstream is None:
            found = next((p for (a, _), p in self.partitions.items() if a == attempt_id), None)
        return found

    async def _notify(self) -> None:
        async with self._registered:
            self._registered.notify_all()

    async def _partition(self, attempt_id: ExecutionAttemptId, downstream: JobVertexId | None) -> ResultPartition | None:
        async def present():
            async with self._registered:
                await self._registered.wait_for(lambda: self._find(attempt_id, downstream) is not None)
        try:
            await asyncio.wait_for(present(), PRODUCER_WAIT_S)
        except asyncio.TimeoutError:
            return None
        return self._find(attempt_id, downstream)  # it may have ended (cancelled) since it was registered

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer = writer.get_extra_info("peername")
        try:
            request, _ = await read_frame(reader)
            if not isinstance(request, PartitionRequest):
                raise WireError(f"expected a PartitionRequest first, got {type(request).__name__}")
            if not tokens_match(self.token, request.token):
                await write_frame(writer, PartitionRequestRejected("invalid token"))
                return
            partition = await self._partition(request.producer, request.consumer_vertex)
            if partition is None or not 0 <= request.subpartition < len(partition.subpartitions):
                await write_frame(writer, PartitionRequestRejected(
                    f"no result partition of producer {request.producer} (subpartition {request.subpartition}) "
                    "on this TaskManager"))
                return
            await partition.serve(request.subpartition, request.initial_credit, reader, writer)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        except WireError as err:
            log.warning("closing data connection from %s: %s", peer, err)
        finally:
            writer.close()
