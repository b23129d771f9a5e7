"""The consumer side of the data exchange: one InputGate per consumer subtask reads its subpartition
of every producer (runtime.taskmanager.network holds the framing and the producer side).

A table is received against one credit; the credit goes back to its producer (AddCredit) once the
task asks for the next item, that is once it is done with the table. Items of a channel blocked for
barrier alignment are held back, in order, until unblock_all(). A lost connection surfaces as the
ConnectionError of the next read, naming the producer.
"""
from __future__ import annotations

import asyncio
import collections
import ssl
import time
from typing import Any

import pyarrow as pa

from runtime.arrow_ipc import table_from_ipc
from runtime.codec import WireError
from runtime.data_messages import AddCredit, DataBuffer, EndOfPartition, PartitionRequest, PartitionRequestRejected
from runtime.ids import ExecutionAttemptId, JobVertexId
from runtime.messages import ProducerLocation
from runtime.taskmanager.network import CONNECT_DEADLINE_S, read_frame, write_frame


class _Channel:
    def __init__(self, index: int, producer: ProducerLocation):
        self.index = index
        self.producer = producer
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None
        self.finished = False
        self.arrivals: collections.deque[float] = collections.deque()  # when each undelivered table came in


class InputGate:
    """All input channels of one consumer subtask, read as one ordered-per-channel stream."""

    def __init__(self, producers: list[ProducerLocation], subpartition: int, consumer: ExecutionAttemptId,
                 token: str, credits: int = 4, ssl_context: ssl.SSLContext | None = None,
                 vertex: JobVertexId | None = None):
        self.channels = [_Channel(i, p) for i, p in enumerate(producers)]
        self.vertex = vertex  # this consumer's vertex: which output of a producer with several it reads
        self.subpartition, self.consumer, self.token, self.credits = subpartition, consumer, token, credits
        self.ssl = ssl_context  # internal TLS: verifies each producer's certificate for the host it advertised
        self._items: asyncio.Queue = asyncio.Queue()
        self._held: dict[int, collections.deque] = collections.defaultdict(collections.deque)
        self._blocked: set[int] = set()
        self._readers: list[asyncio.Task] = []
        self._owed: int | None = None
        self.records_in = 0
        self.bytes_in = 0
        self.last_arrival: float | None = None  # when the table last delivered came in (monotonic)

    async def connect(self, deadline_s: float = CONNECT_DEADLINE_S) -> None:
        """Connect to every producer (retrying until ``deadline_s``) and start reading."""
        streams = await asyncio.gather(*(self._connect(ch, deadline_s) for ch in self.channels))
        for ch, (reader, writer) in zip(self.channels, streams):
            self.attach(ch.index, reader, writer)

    def attach(self, channel: int, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Read ``channel`` from this stream pair (connect() does it for each; tests hand in their own)."""
        ch = self.channels[channel]
        ch.reader, ch.writer = reader, writer
        self._readers.append(asyncio.get_running_loop().create_task(self._read(ch, reader)))

    async def _connect(self, ch: _Channel, deadline_s: float) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        deadline = time.monotonic() + deadline_s
        delay = 0.05
        while True:
            try:
                reader, writer = await asyncio.open_connection(ch.producer.host, ch.producer.data_port, ssl=self.ssl)
                await write_frame(writer, PartitionRequest(self.token, ch.producer.attempt_id, self.subpartition,
                                                           self.consumer, self.credits, self.vertex))
                return reader, writer
            except OSError as err:
                if time.monotonic() > deadline or isinstance(err, ssl.SSLError):  # a bad certificate stays bad
                    raise ConnectionError(f"cannot reach producer {ch.producer.attempt_id} on TaskManager "
                                          f"{ch.producer.tm_id} ({ch.producer.host}:{ch.producer.data_port}): {err}") from None
                await asyncio.sleep(delay)
                delay = min(delay * 2, 1.0)

    async def _read(self, ch: _Channel, reader: asyncio.StreamReader) -> None:
        try:
            while True:
                header, payload = await read_frame(reader)
                if isinstance(header, PartitionRequestRejected):
                    raise ConnectionError(f"producer {ch.producer.attempt_id} on {ch.producer.tm_id} refused: "
                                          f"{header.reason}")
                item = table_from_ipc(payload) if isinstance(header, DataBuffer) else header
                if isinstance(header, DataBuffer):
                    self.bytes_in += len(payload)
                    ch.arrivals.append(time.monotonic())
                await self._items.put((ch.index, item))
                if isinstance(header, EndOfPartition):
                    if ch.writer is not None:  # nothing more to ask of this producer, which closes after this end
                        ch.writer.close()
                    return
        except (asyncio.IncompleteReadError, ConnectionError, WireError, OSError) as err:
            reason = err if not isinstance(err, asyncio.IncompleteReadError) else "connection closed"
            await self._items.put((ch.index, ConnectionError(
                f"lost input from producer {ch.producer.attempt_id} on TaskManager {ch.producer.tm_id}: {reason}")))

    async def next(self) -> tuple[int, Any] | None:
        """The next (channel, table or event); None once every channel delivered EndOfPartition."""
        self._grant_owed_credit()
        while True:
            ready = self._ready()
            if ready is not None or self.finished:
                return ready
            if self._accept(*await self._items.get()):
                return self._deliver(*self._last)

    def poll(self) -> tuple[int, Any] | None:
        """Like next(), but only what has already arrived: None instead of waiting."""
        self._grant_owed_credit()
        while True:
            ready = self._ready()
            if ready is not None or self._items.empty():
                return ready
            if self._accept(*self._items.get_nowait()):
                return self._deliver(*self._last)

    def gather(self, first: pa.Table, max_rows: int) -> tuple[pa.Table, tuple[int, Any] | None]:
        """``first`` and the tables already arrived after it, up to ``max_rows``, as one table (one Spark
        plan for them all); and the event met on the way, if any, to be handled right after."""
        tables, rows = [first], first.num_rows
        while rows < max_rows:
            more = self.poll()
            if more is None:
                break
            if not isinstance(more[1], pa.Table):
                return _concat(tables), more
            tables.append(more[1])
            rows += more[1].num_rows
        return _concat(tables), None

    def _ready(self) -> tuple[int, Any] | None:
        """An item held back for a channel that is no longer blocked."""
        for index in list(self._held):
            if index not in self._blocked and self._held[index]:
                return self._deliver(index, self._held[index].popleft())
        return None

    def _accept(self, index: int, item: Any) -> bool:
        """True if ``item`` can be delivered now (kept in ``_last``); held back if its channel is blocked."""
        if isinstance(item, ConnectionError):
            raise item
        if index in self._blocked:
            self._held[index].append(item)
            return False
        self._last = (index, item)
        return True

    def _deliver(self, index: int, item: Any) -> tuple[int, Any]:
        if isinstance(item, EndOfPartition):
            self.channels[index].finished = True
        if isinstance(item, pa.Table):
            self.records_in += item.num_rows
            self.last_arrival = self.channels[index].arrivals.popleft()
            self._owed = index
        return index, item

    def _grant_owed_credit(self) -> None:
        """Give back the credit of the last table once the caller asks for more (it is done with it)."""
        if self._owed is None:
            return
        ch = self.channels[self._owed]
        self._owed = None
        if ch.writer is not None and not ch.writer.is_closing():
            asyncio.get_running_loop().create_task(write_frame(ch.writer, AddCredit(1)))

    def block(self, channel: int) -> None:
        """Hold back further items of ``channel`` (barrier alignment) until unblock_all()."""
        self._blocked.add(channel)

    def unblock_all(self) -> None:
        self._blocked.clear()

    @property
    def finished(self) -> bool:
        return all(ch.finished for ch in self.channels)

    async def close(self) -> None:
        for task in self._readers:
            task.cancel()
        for ch in self.channels:
            if ch.writer is not None:
                ch.writer.close()


def _concat(tables: list[pa.Table]) -> pa.Table:
    return tables[0] if len(tables) == 1 else pa.concat_tables(tables, promote_options="default")
