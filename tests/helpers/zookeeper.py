"""A standalone ZooKeeper server for tests: a free 127.0.0.1 port, a temp data dir, stopped after.

``pause()`` and ``resume()`` SIGSTOP and SIGCONT it: its clients' connections drop once their pings
go unanswered. Their sessions are not sure to expire however long the pause: on resume the server may
take a reconnect before it expires the session. :class:`ConnectionCutter` cuts clients off while the
server runs, so their sessions expire for certain.
"""
from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import threading
from dataclasses import dataclass

from tests.helpers.clusters import wait_until

CLASSPATH = "/etc/zookeeper/conf:/usr/share/java/zookeeper.jar"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
            s.sendall(b"srvr")
            return b"Zookeeper version" in s.recv(1024)
    except OSError:
        return False


@dataclass
class ZooKeeperServer:
    quorum: str  # the connect string, 127.0.0.1:<port>
    popen: subprocess.Popen

    def pause(self) -> None:
        os.kill(self.popen.pid, signal.SIGSTOP)

    def resume(self) -> None:
        os.kill(self.popen.pid, signal.SIGCONT)


@contextlib.contextmanager
def zookeeper_server(directory):
    """Yield a :class:`ZooKeeperServer` running in ``directory``; kill it on exit."""
    port = _free_port()
    (directory / "data").mkdir(parents=True, exist_ok=True)
    cfg = directory / "zoo.cfg"
    cfg.write_text(f"tickTime=500\ndataDir={directory / 'data'}\nclientPort={port}\nclientPortAddress=127.0.0.1\n"
                   "admin.enableServer=false\n4lw.commands.whitelist=srvr\nminSessionTimeout=1000\n")
    with open(directory / "zookeeper.log", "wb") as log:
        proc = subprocess.Popen(["java", "-cp", CLASSPATH, "org.apache.zookeeper.server.ZooKeeperServerMain", str(cfg)],
                                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    try:
        wait_until(lambda: proc.poll() is not None or _answers(port), 60, "ZooKeeper to answer")
        assert proc.poll() is None, (directory / "zookeeper.log").read_text()[-2000:]
        yield ZooKeeperServer(f"127.0.0.1:{port}", proc)
    finally:
        proc.kill()
        proc.wait()


class ConnectionCutter:
    """A TCP proxy in front of ZooKeeper that can cut its clients off while the server keeps running,
    so that their sessions expire on the server's clock (a paused server may revive them on resume).

    ``cut()`` closes every proxied connection and refuses new ones until ``restore()``.
    """

    def __init__(self, upstream: str):
        host, port = upstream.rsplit(":", 1)
        self.upstream = (host, int(port))
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.quorum = f"127.0.0.1:{self.listener.getsockname()[1]}"
        self.cutting = threading.Event()
        self._lock = threading.Lock()
        self._open: list[socket.socket] = []
        threading.Thread(target=self._accept, name="zk-proxy", daemon=True).start()

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
            except OSError:
                client.close()
                continue
            with self._lock:
                self._open += [client, server]
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (src, dst):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
