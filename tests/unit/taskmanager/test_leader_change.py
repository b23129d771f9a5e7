"""A TaskManager leaves a JobManager that no longer leads at once, even when that JobManager is paused:
its control connection ends without waiting for the paused process to answer the WebSocket close
(Tornado would wait 5 s for it), so it registers with the new leader without that delay."""
from __future__ import annotations

import asyncio

from tornado.websocket import WebSocketProtocol13

from runtime.codec import encode, to_plain
from runtime.config import Configuration
from runtime.ha.services import LeaderInfo
from runtime.ids import LeaderSessionId
from runtime.messages import Envelope, RegistrationAccepted
from runtime.taskmanager.task_manager import TaskManager

OLD, NEW = LeaderSessionId("a" * 32), LeaderSessionId("b" * 32)
TORNADO_CLOSE_WAIT_S = 5.0  # how long a polite close waits for the peer's answer


class PausedJobManager:
    """Accepts the control connection, accepts the registration, then never reads or writes again:
    what a SIGSTOPped JobManager looks like from the TaskManager's side."""

    def __init__(self):
        self.server: asyncio.Server | None = None
        self.registered = asyncio.Event()
        self._writers: list[asyncio.StreamWriter] = []

    async def start(self) -> str:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return f"http://127.0.0.1:{self.server.sockets[0].getsockname()[1]}"

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.append(writer)
        head = (await reader.readuntil(b"\r\n\r\n")).decode()
        key = next(line.split(":", 1)[1].strip() for line in head.split("\r\n")
                   if line.lower().startswith("sec-websocket-key:"))
        accept = WebSocketProtocol13.compute_accept_value(key)
        writer.write(f"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                     f"Sec-WebSocket-Accept: {accept}\r\n\r\n".encode())
        body = encode(Envelope(OLD, to_plain(RegistrationAccepted("tm-test", OLD, 0.1, 1.0)))).encode()
        writer.write(bytes([0x81, 126]) + len(body).to_bytes(2, "big") + body)  # one unmasked text frame
        await writer.drain()
        self.registered.set()

    def close(self) -> None:
        for writer in self._writers:
            writer.close()
        if self.server:
            self.server.close()


class NewLeader:
    """HA services that name another JobManager as leader as soon as asked."""

    def leader(self) -> LeaderInfo:
        return LeaderInfo("jm-new", "http://127.0.0.1:1", NEW)


def test_a_taskmanager_leaves_a_paused_deposed_leader_without_waiting_for_its_answer():
    async def body() -> None:
        paused = PausedJobManager()
        url = await paused.start()
        tm = TaskManager(Configuration({"heartbeat.interval": "100 ms"}), url, "token", slots=1)
        tm.ha = NewLeader()  # type: ignore[assignment]
        try:
            tm.jobmanager_url = url
            serving = asyncio.ensure_future(tm._connect_and_serve())
            await asyncio.wait_for(paused.registered.wait(), 10)
            await asyncio.wait_for(serving, TORNADO_CLOSE_WAIT_S - 1.0)  # no answer to the close awaited
            assert tm.leader_session_id is None and tm._ws is None
        finally:
            paused.close()
            tm.executor.shutdown(wait=False)
            tm.io_executor.shutdown(wait=False)

    asyncio.run(body())
