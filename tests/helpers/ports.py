"""Free loopback ports for processes a test starts and points at a port it chose.

Ports come from below the kernel's ephemeral range. A port the kernel handed out for ``bind(0)`` is free only
until the process that was promised it binds it; any outgoing connection in between (hundreds a second when tests
run in parallel) may take it as its local port, and the process dies with "Address already in use". A connection
to an unused ephemeral port can also connect to itself. Ports below the range are taken only by explicit binds."""
from __future__ import annotations

import random
import socket

LOWEST = 10_000


def _ephemeral_low() -> int:
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as fh:
            return int(fh.read().split()[0])
    except OSError:
        return 32768


def free_port_range(width: int = 1, host: str = "127.0.0.1") -> int:
    """The first of ``width`` consecutive ports on ``host`` that could all be bound just now."""
    rng = random.Random()
    for _ in range(100):
        first = rng.randrange(LOWEST, _ephemeral_low() - width)
        held: list[socket.socket] = []
        try:
            for port in range(first, first + width):
                s = socket.socket()
                held.append(s)
                s.bind((host, port))
            return first
        except OSError:
            continue
        finally:
            for s in held:
                s.close()
    raise AssertionError(f"no run of {width} free ports found on {host}")


def free_port(host: str = "127.0.0.1") -> int:
    return free_port_range(1, host)
