"""SQL's Top-N (and deduplication): the N first rows per partition key by the ORDER BY, as a changelog.

Ranks are ROW_NUMBER's (1, 2, 3, ...), RANK's (ties share a rank, the next skips: 1, 1, 3) or DENSE_RANK's
(1, 1, 2); the rows kept are those ranked from ``start`` to ``limit`` (``rn <= N``, ``rn BETWEEN a AND b``,
``LIMIT n OFFSET m``). Each key keeps its ranked rows (those ranked up to N for an append-only input; all of
them when the input retracts, so a row can move up). After each bundle the new top N of every key it touched is compared
with what was emitted: with a row number column, every position whose row changed is updated (-U/+U),
filled (+I) or emptied (-D); without it, rows that left are deleted and rows that entered inserted.
With ``emit_final`` (batch mode) the top N of each key is emitted once, at the end of the input.
"""
from __future__ import annotations

from typing import Any

import pyarrow as pa

from runtime.keygroups import KEY_GROUP_COLUMN
from runtime.taskmanager import changelog
from runtime.taskmanager.keyed_state import KeyedStateOperator
from runtime.taskmanager.window_operator import END_OF_TIME


def sort_rows(rows: list[tuple[int, tuple]], names: list[str], order: list[tuple[str, bool, bool]]) -> list:
    """``(sequence, row)`` pairs sorted by ``order`` ((column, ascending, nulls first) each), ties by sequence."""
    out = sorted(rows, key=lambda r: r[0])
    for column, ascending, nulls_first in reversed(order):
        i, nulls_low = names.index(column), nulls_first == ascending  # where NULLs go in the sort's own order
        out.sort(key=lambda r: ((r[1][i] is not None) if nulls_low else (r[1][i] is None), r[1][i]),
                 reverse=not ascending)
    return out


class RankOperator(KeyedStateOperator):
    late_records = 0

    def __init__(self, params: dict, _udf=None):
        self.partition: list[str] = params["partition"]
        # (column, ascending, nulls first); NULLs first when ascending, last when descending unless said
        self.order: list[tuple[str, bool, bool]] = [(o[0], bool(o[1]), bool(o[2]) if len(o) > 2 else bool(o[1]))
                                                    for o in params["order"]]
        self.limit = int(params["limit"])
        self.start = int(params.get("start", 1))
        self.function = params.get("function", "row_number")
        self.number: str | None = params.get("number")  # the row number column, when the query keeps it
        self.keep_all = bool(params.get("keep_all"))
        self.emit_final = bool(params.get("emit_final"))
        super().__init__()
        self.names: list[str] | None = params.get("fields")  # the row's columns (default: every data column)
        self.schema: pa.Schema | None = None
        self.seq = 0

    def process(self, table: pa.Table) -> pa.Table | None:
        if table.num_rows == 0:
            return None
        if self.schema is None:
            self.names = self.names or [n for n in table.column_names if n not in (KEY_GROUP_COLUMN, changelog.OP_COLUMN)]
            fields = [table.schema.field(n) for n in self.names]
            self.schema = pa.schema(fields + ([pa.field(self.number, pa.int64())] if self.number else []))
        rows = list(zip(*[table.column(n).to_pylist() for n in self.names]))
        ops = changelog.ops_of(table)
        touched: dict[tuple[int, Any], None] = {}
        for row, op, kg in zip(rows, ops, table.column(KEY_GROUP_COLUMN).to_pylist()):
            key = tuple(row[self.names.index(p)] for p in self.partition)
            touched[(kg, key)] = None
            self._apply(kg, key, row, op)
        return None if self.emit_final else self._emit(list(touched))

    def _apply(self, kg: int, key: tuple, row: tuple, op: int) -> None:
        self.backend.set_current_key(kg, key)
        state = self.backend.read("rank", None) or {"rows": [], "emitted": []}
        if changelog.is_addition(op):
            self.seq += 1
            state["rows"].append((self.seq, row))
            state["rows"] = self._sorted(state["rows"])
            if not self.keep_all:
                state["rows"] = [r for r, rank in zip(state["rows"], self._ranks(state["rows"])) if rank <= self.limit]
        else:
            found = next((i for i, (_, r) in enumerate(state["rows"]) if r == row), None)
            if found is not None:
                del state["rows"][found]
        self.backend.write("rank", state)

    def _sorted(self, rows: list[tuple[int, tuple]]) -> list[tuple[int, tuple]]:
        return sort_rows(rows, self.names, self.order)

    def _emit(self, touched: list[tuple[int, Any]]) -> pa.Table | None:
        out_rows: list[tuple] = []
        ops: list[int] = []
        for kg, key in touched:
            self.backend.set_current_key(kg, key)
            state = self.backend.read("rank", None)
            ranked = [(r, rank) for (_, r), rank in zip(state["rows"], self._ranks(state["rows"]))
                      if self.start <= rank <= self.limit]
            top = [r + (rank,) for r, rank in ranked] if self.number else [r for r, _ in ranked]
            if self.number and self.function == "row_number":
                self._diff_positions(state["emitted"], top, out_rows, ops)
            else:
                self._diff_rows(state["emitted"], top, out_rows, ops)
            state["emitted"] = top
            if state["rows"] or state["emitted"]:
                self.backend.write("rank", state)
            else:
                self.backend.clear("rank")
        return changelog.rows_table(out_rows, ops, self.schema)

    def _ranks(self, rows: list[tuple[int, tuple]]) -> list[int]:
        """Each sorted row's rank: its position (ROW_NUMBER), or shared by rows equal in the ORDER BY columns."""
        if self.function == "row_number":
            return list(range(1, len(rows) + 1))
        positions = [self.names.index(c) for c, _, _ in self.order]
        ranks: list[int] = []
        previous, dense = None, 0
        for i, (_, row) in enumerate(rows):
            values = tuple(row[p] for p in positions)
            if values != previous:
                dense += 1
                ranks.append(i + 1 if self.function == "rank" else dense)
                previous = values
            else:
                ranks.append(ranks[-1])
        return ranks

    @staticmethod
    def _diff_positions(old: list[tuple], new: list[tuple], rows: list, ops: list) -> None:
        for i in range(max(len(old), len(new))):
            before, after = (old[i] if i < len(old) else None), (new[i] if i < len(new) else None)
            if before == after:
                continue
            if before is not None and after is not None:
                rows += [before, after]
                ops += [changelog.UPDATE_BEFORE, changelog.UPDATE_AFTER]
            elif after is not None:
                rows.append(after)
                ops.append(changelog.INSERT)
            else:
                rows.append(before)
                ops.append(changelog.DELETE)

    @staticmethod
    def _diff_rows(old: list[tuple], new: list[tuple], rows: list, ops: list) -> None:
        remaining = list(new)
        for row in old:
            if row in remaining:
                remaining.remove(row)
            else:
                rows.append(row)
                ops.append(changelog.DELETE)
        for row in remaining:
            rows.append(row)
            ops.append(changelog.INSERT)

    def on_watermark(self, watermark: int) -> pa.Table | None:
        if self.emit_final and watermark == END_OF_TIME and self.schema is not None:
            return self._emit(sorted(self.backend.values, key=repr))
        return None

    def restore(self, tables: list[pa.Table], key_groups: range) -> None:
        super().restore(tables, key_groups)
        for entry in self.backend.values.values():
            self.seq = max([self.seq] + [s for s, _ in entry["rank"]["rows"]])
