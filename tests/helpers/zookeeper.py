"""A standalone ZooKeeper server for tests: a free 127.0.0.1 port, a temp data dir, stopped after.

``pause()`` and ``resume()`` SIGSTOP and SIGCONT it: its clients' connections drop once their pings
go unanswered, and their sessions expire if the pause outlasts the session timeout.
"""
from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
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
