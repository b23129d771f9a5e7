"""SQL's regular join (inner, left, right, full, and the semi and anti joins of IN and EXISTS) on equality keys:
an updating result.

Both inputs reach this operator through hash exchanges on their join keys, their rows tagged with
``__side`` (0 left, 1 right) and carrying the columns of their own side. Each key keeps the rows of
both sides with how many rows of the other side each matches. A row that arrives joins the other
side's rows of its key (+I per pair); a retracted row takes its pairs back (-D). For outer joins a row
without partners is emitted padded with NULLs, and that padded row is retracted when its first
partner arrives (and emitted again when its last partner goes). A semi join emits a left row while it has
partners, an anti join while it has none (runtime.taskmanager.semi_join); a null-aware one (NOT IN) also counts
a NULL on either side of its column as a partner. With ``emit_final`` (batch mode) the join of everything is
emitted once, at the end of the input.
"""
from __future__ import annotations


import pyarrow as pa

from runtime.keygroups import KEY_GROUP_COLUMN
from runtime.taskmanager import changelog
from runtime.taskmanager.keyed_state import KeyedStateOperator
from runtime.taskmanager.semi_join import SemiJoin
from runtime.taskmanager.window_operator import END_OF_TIME

SIDE = "__side"
LEFT, RIGHT = 0, 1


class JoinOperator(KeyedStateOperator):
    late_records = 0

    def __init__(self, params: dict, _udf=None):
        self.kind: str = params["kind"]
        self.fields = (params["left_fields"], params["right_fields"])
        self.keys = (params["left_keys"], params["right_keys"])
        self.emit_final = bool(params.get("emit_final"))
        super().__init__()
        self.types: dict[str, pa.DataType] = {}
        self.out_rows: list[tuple] = []
        self.out_ops: list[int] = []
        self.semi = SemiJoin(self.kind, self.fields, params.get("null_aware"), self._out) \
            if self.kind in ("semi", "anti") else None

    def _outer(self, side: int) -> bool:
        """Whether rows of ``side`` without partners are kept (padded with NULLs)."""
        return self.kind == "full" or (self.kind == "left" and side == LEFT) or (self.kind == "right" and side == RIGHT)

    def process(self, table: pa.Table) -> pa.Table | None:
        if table.num_rows == 0:
            return None
        changelog.learn_types(self.types, table)
        sides = table.column(SIDE).to_pylist()
        ops = changelog.column_values(table, changelog.OP_COLUMN)
        groups = table.column(KEY_GROUP_COLUMN).to_pylist()
        names = dict.fromkeys(self.fields[0] + self.fields[1] + self.keys[0] + self.keys[1])  # keys: maybe __global
        columns = {n: changelog.column_values(table, n) for n in names}
        for i, side in enumerate(sides):
            row = tuple(columns[n][i] for n in self.fields[side])
            key = tuple(columns[k][i] for k in self.keys[side])
            adding = changelog.is_addition(ops[i] if ops[i] is not None else 0)
            if any(v is None for v in key):  # NULL keys join nothing
                if self.semi is not None:
                    self.semi.unmatched(side, row, adding)
                elif self._outer(side) and not self.emit_final:
                    self._out(self._pair(side, row, None), changelog.INSERT if adding else changelog.DELETE)
                continue
            self._apply(groups[i], key, side, row, adding)
        return self._flush()

    def _apply(self, kg: int, key: tuple, side: int, row: tuple, adding: bool) -> None:
        self.backend.set_current_key(kg, key)
        state = self.backend.read("join", None) or {LEFT: [], RIGHT: []}
        partners = state[1 - side]
        if self.semi is not None:
            self.semi.apply(state, side, row, adding, self.emit_final)
        elif adding:
            self._add(state, side, row, partners)
        else:
            self._retract(state, side, row, partners)
        if state[LEFT] or state[RIGHT]:
            self.backend.write("join", state)
        else:
            self.backend.clear("join")

    def _add(self, state: dict, side: int, row: tuple, partners: list) -> None:
        for entry in partners:
            if not self.emit_final:
                if entry[1] == 0 and self._outer(1 - side):
                    self._out(self._pair(1 - side, entry[0], None), changelog.DELETE)
                self._out(self._pair(side, row, entry[0]), changelog.INSERT)
            entry[1] += 1
        if not partners and self._outer(side) and not self.emit_final:
            self._out(self._pair(side, row, None), changelog.INSERT)
        state[side].append([row, len(partners)])

    def _retract(self, state: dict, side: int, row: tuple, partners: list) -> None:
        mine = next((e for e in state[side] if e[0] == row), None)
        if mine is None:
            return
        state[side].remove(mine)
        for entry in partners:
            entry[1] -= 1
            if not self.emit_final:
                self._out(self._pair(side, row, entry[0]), changelog.DELETE)
                if entry[1] == 0 and self._outer(1 - side):
                    self._out(self._pair(1 - side, entry[0], None), changelog.INSERT)
        if not partners and self._outer(side) and not self.emit_final:
            self._out(self._pair(side, row, None), changelog.DELETE)

    def _pair(self, side: int, row: tuple, partner: tuple | None) -> tuple:
        other = partner if partner is not None else (None,) * len(self.fields[1 - side])
        return row + other if side == LEFT else other + row

    def _out(self, row: tuple, op: int) -> None:
        self.out_rows.append(row)
        self.out_ops.append(op)

    def _flush(self) -> pa.Table | None:
        rows, ops, self.out_rows, self.out_ops = self.out_rows, self.out_ops, [], []
        names = self.fields[0] if self.semi is not None else self.fields[0] + self.fields[1]
        return changelog.typed_rows_table(names, rows, ops, self.types)

    def on_watermark(self, watermark: int) -> pa.Table | None:
        if not (self.emit_final and watermark == END_OF_TIME):
            return None
        for entry in self.backend.values.values():
            state = entry["join"]
            if self.semi is not None:
                self.semi.final(state)
                continue
            for left, _ in state[LEFT]:
                for right, _ in state[RIGHT]:
                    self._out(left + right, changelog.INSERT)
            for side in (LEFT, RIGHT):
                if not state[1 - side] and self._outer(side):
                    for row, _ in state[side]:
                        self._out(self._pair(side, row, None), changelog.INSERT)
        return self._flush()
