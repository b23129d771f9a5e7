"""A priority queue with java.util.PriorityQueue's exact order: the same binary heap, the same sifts.

Flink's NFA keeps its partial and completed matches in Java priority queues ordered by the match's first
event. Matches that start at the same event tie, and which of them a skip strategy keeps depends on where
each sits in the heap: iterating a Java queue walks its array, not the sorted order. Emulating the heap
keeps those ties breaking as they do in Flink.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any


class JavaPriorityQueue:
    """A min-heap by ``key`` with java.util.PriorityQueue's offer, poll, peek, iteration and bulk removal."""

    def __init__(self, key: Callable[[Any], Any]):
        self.key = key
        self.items: list = []

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self) -> Iterator:
        """The heap's array order, as iterating a Java PriorityQueue does (a copy: safe to change the queue)."""
        return iter(list(self.items))

    def offer(self, item) -> None:
        """Add ``item`` (Java's ``offer``/``add``: append, then sift up)."""
        self.items.append(item)
        self._sift_up(len(self.items) - 1, item)

    def peek(self):
        """The least item, or None."""
        return self.items[0] if self.items else None

    def poll(self):
        """Remove and return the least item, or None (Java's ``poll``: the last item sifts down from the root)."""
        if not self.items:
            return None
        result, last = self.items[0], self.items.pop()
        if self.items:
            self._sift_down(0, last)
        return result

    def remove_if(self, doomed: Callable[[Any], bool]) -> None:
        """Remove every item ``doomed`` says (Java's ``removeIf``/``removeAll``: survivors kept in array order,
        then the heap rebuilt); the heap stays untouched when nothing goes."""
        survivors = [item for item in self.items if not doomed(item)]
        if len(survivors) == len(self.items):
            return
        self.items = survivors
        for i in range(len(self.items) // 2 - 1, -1, -1):
            self._sift_down(i, self.items[i])

    def _sift_up(self, k: int, item) -> None:
        key = self.key(item)
        while k > 0:
            parent = (k - 1) >> 1
            if key >= self.key(self.items[parent]):
                break
            self.items[k] = self.items[parent]
            k = parent
        self.items[k] = item

    def _sift_down(self, k: int, item) -> None:
        n = len(self.items)
        key = self.key(item)
        while k < n >> 1:
            child = 2 * k + 1
            if child + 1 < n and self.key(self.items[child]) > self.key(self.items[child + 1]):
                child += 1
            if key <= self.key(self.items[child]):
                break
            self.items[k] = self.items[child]
            k = child
        self.items[k] = item
