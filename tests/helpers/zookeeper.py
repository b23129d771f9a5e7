"""A standalone ZooKeeper server for tests: a free 127.0.0.1 port, a temp data dir, stopped after.

``kill()`` then ``start()`` restarts it on the same port with the same data. ``pause()`` and
``resume()`` SIGSTOP and SIGCONT it: its clients' connections drop once their pings go unanswered.
Their sessions are not sure to expire however long the pause: on resume the server may take a
reconnect before it expires the session. :class:`ConnectionCutter` cuts clients off while the server
runs, so their sessions expire for certain.
"""
from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess

from tests.helpers.clusters import wait_until
from tests.helpers.ports import free_port
from tests.helpers.proxy import TcpProxy

CLASSPATH = "/etc/zookeeper/conf:/usr/share/java/zookeeper.jar"


def _answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
            s.sendall(b"srvr")
            return b"Zookeeper version" in s.recv(1024)
    except OSError:
        return False


class ZooKeeperServer:
    """One standalone ZooKeeper server on a fixed port with its data in ``directory``: it can be killed
    and started again there, keeping its data (sessions, znodes) as a restarted server does."""

    def __init__(self, directory):
        self.directory = directory
        self.port = free_port()
        self.quorum = f"127.0.0.1:{self.port}"  # the connect string
        self.popen: subprocess.Popen | None = None
        (directory / "data").mkdir(parents=True, exist_ok=True)
        self.config = directory / "zoo.cfg"
        self.config.write_text(
            f"tickTime=500\ndataDir={directory / 'data'}\nclientPort={self.port}\nclientPortAddress=127.0.0.1\n"
            "admin.enableServer=false\n4lw.commands.whitelist=srvr\nminSessionTimeout=1000\n")

    def start(self) -> None:
        """Start the server and wait until it answers; AssertionError with its log if it exits."""
        with open(self.directory / "zookeeper.log", "ab") as log:
            self.popen = subprocess.Popen(["java", "-cp", CLASSPATH, "org.apache.zookeeper.server.ZooKeeperServerMain",
                                           str(self.config)], stdout=log, stderr=subprocess.STDOUT,
                                          stdin=subprocess.DEVNULL)
        proc = self.popen
        wait_until(lambda: proc.poll() is not None or _answers(self.port), 60, "ZooKeeper to answer")
        assert proc.poll() is None, (self.directory / "zookeeper.log").read_text()[-2000:]

    def kill(self) -> None:
        """SIGKILL the server, as a crash ends it."""
        if self.popen is not None:
            if self.popen.poll() is None:
                os.kill(self.popen.pid, signal.SIGCONT)  # a paused server must not stay a stopped zombie
            self.popen.kill()
            self.popen.wait()

    def pause(self) -> None:
        assert self.popen is not None
        os.kill(self.popen.pid, signal.SIGSTOP)

    def resume(self) -> None:
        assert self.popen is not None
        os.kill(self.popen.pid, signal.SIGCONT)


@contextlib.contextmanager
def zookeeper_server(directory):
    """Yield a running :class:`ZooKeeperServer` in ``directory``; kill it on exit."""
    server = ZooKeeperServer(directory)
    try:
        server.start()
        yield server
    finally:
        server.kill()


class ConnectionCutter(TcpProxy):
    """A TCP proxy in front of ZooKeeper that can cut its clients off while the server keeps running,
    so that their sessions expire on the server's clock (a paused server may revive them on resume).

    ``cut()`` closes every proxied connection and refuses new ones until ``restore()``.
    """

    def __init__(self, upstream: str):
        host, port = upstream.rsplit(":", 1)
        super().__init__((host, int(port)))
        self.quorum = self.address
