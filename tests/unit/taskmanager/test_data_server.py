"""A producer's DataServer over a real socket on 127.0.0.1: how a finished subpartition's connection ends."""
import asyncio

import pyarrow as pa

from runtime.ids import ExecutionAttemptId
from runtime.data_messages import AddCredit, DataBuffer, EndOfPartition, PartitionRequest
from runtime.taskmanager.network import DataServer, ResultPartition, read_frame, write_frame


def test_a_credit_sent_after_the_end_of_partition_does_not_reset_what_the_consumer_has_not_read():
    """The consumer's last credit may reach the producer after its EndOfPartition went out. Had the
    producer closed at once, that unread credit would make the kernel reset the connection, discarding
    the frames still waiting on the consumer's side: the producer lets the consumer close first."""
    async def body():
        server = DataServer("127.0.0.1", 0, "token")
        await server.start()
        partition = ResultPartition(ExecutionAttemptId("p"), 1, max_buffered=64)
        server.register(partition)
        for _ in range(32):
            await partition.emit(0, pa.table({"x": list(range(10_000))}))
        await partition.broadcast_event(EndOfPartition())
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        await write_frame(writer, PartitionRequest("token", partition.attempt_id, 0, ExecutionAttemptId("c"), 64))
        await partition.drained(5)  # everything is written to the socket; none of it read yet
        for _ in range(20):
            await asyncio.sleep(0)  # the producer's handler runs on past its last frame
        await write_frame(writer, AddCredit(1))
        await asyncio.sleep(0.2)  # the credit arrives before this end reads: the order that lost the end
        frames = []
        while not frames or not isinstance(frames[-1], EndOfPartition):
            frames.append((await read_frame(reader))[0])
        assert sum(f.rows for f in frames if isinstance(f, DataBuffer)) == 320_000
        writer.close()
        await server.stop()
    asyncio.run(body())
