"""How long a TaskManager has gone unheard by its leader, as the TaskManager itself can tell.

The JobManager declares a TaskManager lost once no heartbeat reached it for ``heartbeat.timeout`` (and
fails over its attempts). The TaskManager cannot see that happen, but it can bound it: the JobManager
answers the registration and every heartbeat it accepts, in order on one connection (one it does not
accept ends the connection, and a new one starts the count afresh), so when an answer arrives the
heartbeat it answers was sent no later than the JobManager heard it. Until that send time plus the
timeout has passed, the JobManager cannot have declared this TaskManager lost; after it, it may have.
A snapshot upload asks first (runtime.checkpoint.fencing.UploadFence), so a TaskManager woken from a
pause longer than the timeout writes nothing more for attempts that may have been superseded meanwhile.
Any thread may read it.
"""
from __future__ import annotations

import collections
import math
import time

from runtime.messages import Heartbeat, HeartbeatAck, RegisterTaskManager, RegistrationAccepted


class HeartbeatLease:
    def __init__(self, clock=time.monotonic):
        self.clock = clock
        self.timeout_s = math.inf  # heartbeat.timeout, as the JobManager's registration answer gives it
        self._sent: collections.deque[float] = collections.deque(maxlen=1024)  # unanswered, oldest first
        self._heard_at = clock()  # send time of the last answered heartbeat

    def wrote(self, message) -> None:
        """A message went to the JobManager; a registration starts a new connection's count."""
        if isinstance(message, RegisterTaskManager):
            self._sent.clear()
        if isinstance(message, (RegisterTaskManager, Heartbeat)):
            self._sent.append(self.clock())

    def received(self, message) -> None:
        """A message came from the JobManager; an answer settles the oldest heartbeat waiting for one."""
        if isinstance(message, RegistrationAccepted):
            self.timeout_s = message.heartbeat_timeout
        if isinstance(message, (RegistrationAccepted, HeartbeatAck)) and self._sent:
            self._heard_at = self._sent.popleft()

    def silence(self) -> float:
        """Seconds since the last heartbeat the JobManager is known to have heard was sent."""
        return self.clock() - self._heard_at
