"""The semi and anti joins of ``IN``/``EXISTS`` and ``NOT IN``/``NOT EXISTS``, inside the regular join operator.

A key's state holds ``[row, partners]`` entries on both sides, as for other joins; only left rows are ever
emitted. A semi join emits a left row while it has at least one partner, an anti join while it has none, so a
right row that arrives or leaves can move a left row in or out of the result (+I / -D). ``NOT IN`` is
null-aware: besides equal keys, a NULL in its column on either side makes a partner (``x NOT IN (..., NULL)``
is never true, and ``NULL NOT IN (...)`` is true only for an empty subquery), so its planner keys both inputs
by their correlation keys alone (or one global key) and lets :meth:`SemiJoin.matches` compare the column.
"""
from __future__ import annotations

from collections.abc import Callable

from runtime.taskmanager import changelog

LEFT, RIGHT = 0, 1


class SemiJoin:
    def __init__(self, kind: str, fields: tuple[list[str], list[str]], null_aware: list[str] | None,
                 out: Callable[[tuple, int], None]):
        self.anti = kind == "anti"
        self.out = out
        self.columns = None if not null_aware else (fields[0].index(null_aware[0]), fields[1].index(null_aware[1]))

    def matches(self, left: tuple, right: tuple) -> bool:
        """Whether two rows of one key are partners (always, unless the join is null-aware)."""
        if self.columns is None:
            return True
        a, b = left[self.columns[0]], right[self.columns[1]]
        return a is None or b is None or a == b

    def emitted(self, partners: int) -> bool:
        return partners == 0 if self.anti else partners > 0

    def apply(self, state: dict, side: int, row: tuple, adding: bool, final: bool) -> None:
        """A row added to or retracted from one side of its key."""
        if side == LEFT:
            self._left(state, row, adding, final)
            return
        if adding:
            state[RIGHT].append([row, 0])
        else:
            mine = next((e for e in state[RIGHT] if e[0] == row), None)
            if mine is None:
                return
            state[RIGHT].remove(mine)
        for entry in state[LEFT]:
            if not self.matches(entry[0], row):
                continue
            before = self.emitted(entry[1])
            entry[1] += 1 if adding else -1
            if before != self.emitted(entry[1]) and not final:
                self.out(entry[0], changelog.INSERT if not before else changelog.DELETE)

    def _left(self, state: dict, row: tuple, adding: bool, final: bool) -> None:
        if adding:
            partners = sum(1 for right, _ in state[RIGHT] if self.matches(row, right))
            state[LEFT].append([row, partners])
            if self.emitted(partners) and not final:
                self.out(row, changelog.INSERT)
            return
        mine = next((e for e in state[LEFT] if e[0] == row), None)
        if mine is not None:
            state[LEFT].remove(mine)
            if self.emitted(mine[1]) and not final:
                self.out(row, changelog.DELETE)

    def unmatched(self, side: int, row: tuple, adding: bool) -> None:
        """A row whose key has a NULL: it matches nothing, so an anti join keeps a left one (at once: nothing can
        change that, so batch mode emits it now too)."""
        if side == LEFT and self.anti:
            self.out(row, changelog.INSERT if adding else changelog.DELETE)

    def final(self, state: dict) -> None:
        """Batch mode, at the end of the input: every left row the join keeps, once."""
        for row, partners in state[LEFT]:
            if self.emitted(partners):
                self.out(row, changelog.INSERT)
