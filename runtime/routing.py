"""The control channel's messages read and routed the same way at both ends: the JobManager's
(runtime.jobmanager.control) and the TaskManager's (runtime.taskmanager.control_endpoint).

Each end keeps a table of message type -> handler (:class:`MessageRoutes`) instead of a chain of
isinstance tests, so what an end answers to is written down once and a message it does not expect is
logged, never raised: one odd message must not end a connection.
"""
from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from runtime.codec import decode, from_plain
from runtime.messages import Envelope

log = logging.getLogger(__name__)

Handler = Callable[[Any], object]  # what it returns is not used


def read_envelope(raw: str | bytes) -> tuple[Envelope, Any]:
    """A control frame's envelope (with its fencing token) and the message in it; WireError if malformed."""
    envelope = decode(raw, Envelope)
    return envelope, from_plain(envelope.body)


class MessageRoutes:
    """Which handler takes each type of message one end of the control channel receives."""

    def __init__(self, table: Mapping[type, Handler], sender: Callable[[], object]):
        """``sender()`` names the other end in the log line of an unexpected message."""
        self.table = dict(table)
        self.sender = sender

    def __contains__(self, kind: type) -> bool:
        return kind in self.table

    def dispatch(self, message: Any) -> None:
        """Hand ``message`` to its handler; a type nobody handles is logged and dropped."""
        handler = self.table.get(type(message))
        if handler is None:
            log.warning("unexpected control message %s from %s", type(message).__name__, self.sender())
            return
        handler(message)
