"""How a foreground process (``flinkbench jobmanager``, ``flinkbench historyserver``) is told to stop: SIGTERM
(what ``cluster stop`` and process managers send) or SIGINT (Ctrl-C), each ending :func:`until_stop_signal`."""
from __future__ import annotations

import asyncio
import signal


async def until_stop_signal() -> None:
    """Return once the process receives SIGTERM or SIGINT (on the running loop's thread, the main one)."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
