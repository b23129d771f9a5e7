"""Credit-based flow control of ResultPartition and InputGate, over in-memory streams (no sockets)."""
import asyncio

import pyarrow as pa
import pytest

from runtime.arrow_ipc import table_to_ipc
from runtime.codec import WireError, encode
from runtime.ids import ExecutionAttemptId, TaskManagerId
from runtime.data_messages import AddCredit, CheckpointBarrier, DataBuffer, EndOfPartition, Watermark
from runtime.messages import ProducerLocation
from runtime.taskmanager.barriers import BarrierAligner
from runtime.taskmanager.input_gate import InputGate
from runtime.taskmanager.network import HEADER, ResultPartition, read_frame


class MemoryWriter:
    """The writing half of a stream that keeps what was written, for read_frame to parse."""

    def __init__(self):
        self.data, self.closed = bytearray(), False

    def write(self, data: bytes) -> None:
        self.data += data

    async def drain(self) -> None:
        await asyncio.sleep(0)

    def is_closing(self) -> bool:
        return self.closed

    def close(self) -> None:
        self.closed = True

    async def frames(self) -> list:
        reader = asyncio.StreamReader()
        reader.feed_data(bytes(self.data))
        reader.feed_eof()
        out = []
        while not reader.at_eof():
            out.append((await read_frame(reader))[0])
        return out


def frame(header, payload: bytes = b"") -> bytes:
    encoded = encode(header).encode()
    return HEADER.pack(len(encoded)) + encoded + payload


def table(n: int) -> pa.Table:
    return pa.table({"x": list(range(n))})


async def settle():
    for _ in range(20):
        await asyncio.sleep(0)


def run(coro):
    return asyncio.run(coro)


def test_a_subpartition_sends_buffers_only_against_credit_and_emit_waits_when_it_is_full():
    async def body():
        partition = ResultPartition(ExecutionAttemptId("p"), 1, max_buffered=2)
        await partition.emit(0, table(1))
        await partition.emit(0, table(2))
        third = asyncio.ensure_future(partition.emit(0, table(3)))
        await settle()
        assert not third.done(), "a subpartition holding max_buffered unsent buffers makes emit wait"
        credits, writer = asyncio.StreamReader(), MemoryWriter()
        serving = asyncio.ensure_future(partition.serve(0, 1, credits, writer))
        await settle()
        assert [f.rows for f in await writer.frames()] == [1], "one credit, one buffer"
        assert third.done() and partition.subpartitions[0].credit == 0
        credits.feed_data(frame(AddCredit(2)))
        await settle()
        assert [f.rows for f in await writer.frames()] == [1, 2, 3]
        await partition.broadcast_event(EndOfPartition())
        await settle()
        assert isinstance((await writer.frames())[-1], EndOfPartition)
        assert not serving.done(), "after the end of partition the producer waits for the consumer to close first"
        credits.feed_data(frame(AddCredit(1)))  # a late credit, still read (unread, closing would reset)
        credits.feed_eof()
        await asyncio.wait_for(serving, 1)
    run(body())


def test_events_need_no_credit_but_keep_their_place_behind_data():
    async def body():
        partition = ResultPartition(ExecutionAttemptId("p"), 2, max_buffered=4)
        await partition.emit(0, table(5))
        await partition.broadcast_event(Watermark(10.0))
        credits, writer = asyncio.StreamReader(), MemoryWriter()
        asyncio.ensure_future(partition.serve(0, 0, credits, writer))
        other_writer = MemoryWriter()
        asyncio.ensure_future(partition.serve(1, 0, asyncio.StreamReader(), other_writer))
        await settle()
        assert await writer.frames() == [], "the watermark waits behind the buffer that has no credit"
        assert await other_writer.frames() == [Watermark(10.0)], "with no data ahead it goes at once"
        credits.feed_data(frame(AddCredit(1)))
        await settle()
        assert [type(f).__name__ for f in await writer.frames()] == ["DataBuffer", "Watermark"]
        assert partition.records_by_subpartition() == {"0": 5, "1": 0}
    run(body())


def test_a_second_consumer_of_one_subpartition_is_refused():
    async def body():
        partition = ResultPartition(ExecutionAttemptId("p"), 1)
        asyncio.ensure_future(partition.serve(0, 1, asyncio.StreamReader(), MemoryWriter()))
        await settle()
        with pytest.raises(WireError, match="already has a consumer"):
            await partition.serve(0, 1, asyncio.StreamReader(), MemoryWriter())
    run(body())


def gate_with_channels(n: int):
    producers = [ProducerLocation(ExecutionAttemptId(f"p{i}"), i, TaskManagerId("tm"), "127.0.0.1", 1) for i in range(n)]
    gate = InputGate(producers, 0, ExecutionAttemptId("consumer"), "token", credits=2)
    streams = [(asyncio.StreamReader(), MemoryWriter()) for _ in range(n)]
    for i, (reader, writer) in enumerate(streams):
        gate.attach(i, reader, writer)
    return gate, streams


def send_table(reader: asyncio.StreamReader, rows: int) -> None:
    payload = table_to_ipc(table(rows))
    reader.feed_data(frame(DataBuffer(rows, len(payload)), payload))


def test_the_gate_returns_a_tables_credit_once_the_task_asks_for_more():
    async def body():
        gate, [(reader, writer)] = gate_with_channels(1)
        send_table(reader, 3)
        send_table(reader, 4)
        channel, first = await gate.next()
        assert (channel, first.num_rows) == (0, 3) and await writer.frames() == []
        channel, second = await gate.next()
        await settle()
        assert second.num_rows == 4 and await writer.frames() == [AddCredit(1)]
        assert gate.poll() is None
        await settle()
        assert await writer.frames() == [AddCredit(1), AddCredit(1)]
        assert gate.records_in == 7
        await gate.close()
    run(body())


def test_a_blocked_channel_is_held_back_in_order_while_the_others_flow():
    async def body():
        gate, [(r0, w0), (r1, _)] = gate_with_channels(2)
        gate.block(0)
        r0.feed_data(frame(Watermark(1.0)) + frame(Watermark(2.0)))
        r1.feed_data(frame(Watermark(5.0)))
        assert await gate.next() == (1, Watermark(5.0))
        assert gate.poll() is None
        gate.unblock_all()
        assert [gate.poll(), gate.poll()] == [(0, Watermark(1.0)), (0, Watermark(2.0))]
        r0.feed_data(frame(EndOfPartition()))
        r1.feed_data(frame(EndOfPartition()))
        assert isinstance((await gate.next())[1], EndOfPartition) and not gate.finished
        assert w0.closed, "after its end of partition a channel closes its end: its producer waits for that"
        assert isinstance((await gate.next())[1], EndOfPartition) and gate.finished
        assert await gate.next() is None
    run(body())


def test_a_lost_producer_surfaces_as_a_connection_error_naming_it():
    async def body():
        gate, [(reader, _)] = gate_with_channels(1)
        reader.feed_data(b"\x00\x00")
        reader.feed_eof()
        with pytest.raises(ConnectionError, match="lost input from producer p0 on TaskManager tm: connection closed"):
            await gate.next()
    run(body())


def test_gather_joins_the_tables_already_arrived_up_to_the_bundle_limit_and_stops_at_an_event():
    async def body():
        gate, [(reader, _)] = gate_with_channels(1)
        for rows in (3, 4, 5):
            send_table(reader, rows)
        reader.feed_data(frame(Watermark(9.0)))
        send_table(reader, 6)
        _, first = await gate.next()
        await settle()
        joined, waiting = gate.gather(first, max_rows=100)
        assert joined.num_rows == 12 and waiting == (0, Watermark(9.0))
        _, after = await gate.next()
        assert gate.gather(after, max_rows=6) == (after, None)  # at the limit already: nothing more joins
    run(body())


def test_alignment_holds_each_channel_until_all_delivered_and_a_newer_barrier_drops_an_unfinished_one():
    async def body():
        gate, [(r0, _), (r1, _)] = gate_with_channels(2)
        aligner = BarrierAligner()
        assert not aligner.arrive(0, CheckpointBarrier(1, 0.0), gate)
        r0.feed_data(frame(Watermark(1.0)))
        r1.feed_data(frame(Watermark(2.0)))
        assert await gate.next() == (1, Watermark(2.0))  # channel 0 is held back
        assert not aligner.arrive(1, CheckpointBarrier(2, 0.0), gate)  # 2 overtakes 1: 0 flows again
        assert aligner.checkpoint_id == 2 and gate.poll() == (0, Watermark(1.0))
        assert not aligner.arrive(0, CheckpointBarrier(1, 0.0), gate)  # late: ignored
        assert aligner.arrive(0, CheckpointBarrier(2, 0.0), gate)
    run(body())
