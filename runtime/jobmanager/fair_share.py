"""Fair share of free slots between users whose jobs wait: which waiting slot request to serve next.

A pure state machine, fed by the ResourceManager (runtime.jobmanager.resource_manager) on its loop: it
holds the queue of waiting requests; ``Requested`` and ``Withdrawn`` change the queue and decide
nothing; ``Capacity`` (the slots free now, and how many each user holds) answers with the requests to
grant, in order. The user holding the fewest slots goes first, with their oldest request (ties: the
request that waited longest); a grant counts at once toward what its user holds, so among equals the
free slots go round in turn. When the fairest request does not fit in the free slots, nothing is
granted past it: a user's large request is not overtaken for ever by others' small ones (it fails at
its own ``slot.request.timeout`` if the cluster never has room). With one user this is first come,
first served, as it was.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Requested:
    """A job of ``user`` waits for ``count`` slots, all at once."""
    request: int
    user: str
    count: int


@dataclass(frozen=True)
class Withdrawn:
    """The request was served elsewhere, timed out or was cancelled."""
    request: int


@dataclass(frozen=True)
class Capacity:
    """Slots free to hand out now, and how many each user's jobs hold."""
    free: int
    held: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Grant:
    """Hand ``count`` free slots to the request now."""
    request: int
    user: str
    count: int


Event = Requested | Withdrawn | Capacity


class FairShare:
    """The waiting slot requests, oldest first, and the decision of whom the free slots go to."""

    def __init__(self) -> None:
        self.waiting: list[Requested] = []

    def handle(self, event: Event) -> list[Grant]:
        if isinstance(event, Requested):
            if all(w.request != event.request for w in self.waiting):
                self.waiting.append(event)
            return []
        if isinstance(event, Withdrawn):
            self.waiting = [w for w in self.waiting if w.request != event.request]
            return []
        return self._grants(event.free, dict(event.held))

    def _grants(self, free: int, held: dict[str, int]) -> list[Grant]:
        grants: list[Grant] = []
        while self.waiting:
            fairest = min(self.waiting, key=lambda w: (held.get(w.user, 0), self.waiting.index(w)))
            if fairest.count > free:
                break
            self.waiting.remove(fairest)
            free -= fairest.count
            held[fairest.user] = held.get(fairest.user, 0) + fairest.count
            grants.append(Grant(fairest.request, fairest.user, fairest.count))
        return grants
