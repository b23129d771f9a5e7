"""A TCP proxy for tests: sits between clients and a server, can cut them off, and can record every
byte that crosses it (to prove what does, and does not, travel in the clear)."""
from __future__ import annotations

import contextlib
import socket
import threading


class TcpProxy:
    """Listens on ``listen_host`` (a free port) and relays each connection to ``upstream`` (host, port).

    ``cut()`` closes every relayed connection and refuses new ones until ``restore()``. With ``record``
    every byte relayed is kept: ``streams()`` returns each direction of each connection as it crossed.
    """

    def __init__(self, upstream: tuple[str, int], listen_host: str = "127.0.0.1", record: bool = False):
        self.upstream = upstream
        self.listener = socket.create_server((listen_host, 0))
        self.host, self.port = self.listener.getsockname()[:2]
        self.address = f"{self.host}:{self.port}"
        self.cutting = threading.Event()
        self.record = record
        self.connections = 0
        self._streams: list[tuple[str, bytearray]] = []  # ("client" | "server", bytes it sent)
        self._lock = threading.Lock()
        self._open: list[socket.socket] = []
        threading.Thread(target=self._accept, name="tcp-proxy", daemon=True).start()

    def streams(self, sender: str | None = None) -> list[bytes]:
        """Every direction of every connection so far (only what ``sender``, "client" or "server", sent)."""
        with self._lock:
            return [bytes(data) for who, data in self._streams if sender in (None, who)]

    def cut(self) -> None:
        self.cutting.set()
        with self._lock:
            for sock in self._open:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                sock.close()
            self._open.clear()

    def restore(self) -> None:
        self.cutting.clear()

    def close(self) -> None:
        self.cut()
        self.listener.close()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return  # closed
            if self.cutting.is_set():
                client.close()
                continue
            try:
                server = socket.create_connection(self.upstream, timeout=5)
                server.settimeout(None)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._open += [client, server]
                self.connections += 1
            for a, b, who in ((client, server, "client"), (server, client, "server")):
                record = bytearray()
                if self.record:
                    with self._lock:
                        self._streams.append((who, record))
                threading.Thread(target=self._pump, args=(a, b, record), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket, record: bytearray) -> None:
        try:
            while data := src.recv(65536):
                if self.record:
                    with self._lock:
                        record.extend(data)
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (src, dst):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
