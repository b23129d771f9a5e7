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
from runtime.ids import AllocationId, JobId, TaskManagerId
from runtime.messages import Envelope, Heartbeat, RegisterTaskManager, RegistrationAccepted, RequestSlot
from runtime.taskmanager.control_endpoint import ControlEndpoint

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


class IdleTaskManager:
    """A TaskManager role with no slots and nothing to do."""
    lost = 0

    def registration(self):
        return RegisterTaskManager(TaskManagerId("tm-test"), "127.0.0.1", 1, 0, 1, "local[1]", [], True)

    def heartbeat(self):
        return Heartbeat(TaskManagerId("tm-test"), [], True)

    def status(self):
        raise AssertionError("no status is due within the test")

    def routes(self):
        return {}

    def connection_lost(self):
        self.lost += 1


def test_a_taskmanager_leaves_a_paused_deposed_leader_without_waiting_for_its_answer():
    async def body() -> None:
        paused = PausedJobManager()
        url = await paused.start()
        endpoint = ControlEndpoint(Configuration({"heartbeat.interval": "100 ms"}), url, "token",
                                   NewLeader())  # type: ignore[arg-type]
        endpoint.serve(IdleTaskManager())
        try:
            serving = asyncio.ensure_future(endpoint._connect_and_serve())
            await asyncio.wait_for(paused.registered.wait(), 10)
            await asyncio.wait_for(serving, TORNADO_CLOSE_WAIT_S - 1.0)  # no answer to the close awaited
            assert endpoint.leader_session_id is None and endpoint._ws is None
        finally:
            paused.close()

    asyncio.run(body())


class RecordingTaskManager(IdleTaskManager):
    def __init__(self):
        self.handled = []

    def routes(self):
        return {RequestSlot: self.handled.append}


def test_the_endpoint_routes_its_leaders_messages_to_the_role_and_drops_other_sessions():
    endpoint = ControlEndpoint(Configuration({}), "http://127.0.0.1:1", "token", None)
    role = RecordingTaskManager()
    endpoint.serve(role)
    request = RequestSlot(AllocationId("alloc"), JobId("job"), 0)

    def arrive(session, message):
        endpoint._on_message(encode(Envelope(session, to_plain(message))))
    arrive(OLD, RegistrationAccepted("tm-test", OLD, 0.1, 1.0))
    arrive(NEW, request)  # a JobManager that is not our leader
    assert role.handled == [] and endpoint.leader_session_id == OLD
    arrive(OLD, request)
    arrive(OLD, Heartbeat(TaskManagerId("x"), [], True))  # nobody handles it here: logged, not raised
    assert role.handled == [request]
