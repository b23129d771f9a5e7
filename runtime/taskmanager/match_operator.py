"""SQL's MATCH_RECOGNIZE operator: per partition key, rows in event-time order through a pattern's NFA.

As Flink's CEP operator does in event time: each row waits in its key's buffer until the watermark passes
its time (a row at or behind the watermark when it arrives is late: dropped and counted); then the key's
rows due are fed to the NFA (runtime.cep.nfa) in time order — rows of equal time by the ORDER BY columns
after the time attribute, else as they arrived — each time first letting WITHIN end the partial matches it
outlived. Every match becomes one row: the partition key and the atoms its measures need (navigations and
aggregates over the match's rows, runtime.cep.expressions). Buffered rows and the NFA state (partial
matches, finished matches waiting for earlier ones) are keyed state: in checkpoints, split by key group.
"""
from __future__ import annotations

from typing import Any

import pyarrow as pa

from runtime.cep.expressions import evaluate
from runtime.cep.nfa import ALL, Event, Nfa
from runtime.ddl import arrow_schema
from runtime.keygroups import KEY_GROUP_COLUMN
from runtime.taskmanager.keyed_state import KeyedStateOperator
from runtime.taskmanager.time_join_operator import micros
from runtime.taskmanager.window_operator import BEFORE_TIME


class MatchOperator(KeyedStateOperator):
    def __init__(self, params: dict, _udf=None):
        self.partition: list[str] = params["partition"]
        self.time_column: str = params["time_column"]
        self.order: list[tuple[str, bool, bool]] = [tuple(o) for o in params.get("order") or []]
        self.fields: list[str] = params["fields"]
        self.atoms: list[dict] = params["atoms"]
        self.schema = arrow_schema(params["schema"])
        self.nfa = Nfa(params["pattern"])
        super().__init__()
        self.watermark = BEFORE_TIME
        self.late_records = 0

    def process(self, table: pa.Table) -> pa.Table | None:
        if table.num_rows == 0:
            return None
        self._learn_types(table)
        times = micros(table, self.time_column)
        rows = table.select([n for n in self.fields if n in table.column_names]).to_pylist()
        for row, ts, kg in zip(rows, times, table.column(KEY_GROUP_COLUMN).to_pylist()):
            if ts is None or ts <= self.watermark:
                self.late_records += 1
                continue
            self.backend.set_current_key(kg, tuple(row[p] for p in self.partition))
            state = self.backend.read("match", None) or {"buffer": {}, "nfa": None, "seq": 0}
            state["buffer"].setdefault(ts, []).append(row)
            self.backend.write("match", state)
        return None

    def _learn_types(self, table: pa.Table) -> None:
        """Columns copied from the input (partition keys, navigated columns) keep the input's Arrow type."""
        copied = {p: p for p in self.partition} | {a["name"]: a["column"] for a in self.atoms
                                                   if a.get("column") and a["ir"][0] == "nav"}
        self.schema = pa.schema([f.with_type(table.schema.field(copied[f.name]).type)
                                 if f.name in copied and copied[f.name] in table.column_names else f
                                 for f in self.schema])

    def on_watermark(self, watermark: int) -> pa.Table | None:
        """Feed every key's rows the watermark passed to its NFA, in time order; returns one row per match."""
        if watermark <= self.watermark:
            return None
        self.watermark = watermark
        out: list[dict] = []
        for kg, key in list(self.backend.values):
            self.backend.set_current_key(kg, key)
            state = self.backend.read("match", None)
            out += [self._row(key, path) for path in self._advance(state, watermark)]
            if state["buffer"] or state["nfa"] is not None:
                self.backend.write("match", state)
            else:
                self.backend.clear("match")
        return pa.Table.from_pylist(out, schema=self.schema) if out else None

    def _advance(self, state: dict, watermark: int) -> list[tuple]:
        nfa_state = state["nfa"] or self.nfa.initial()
        matches = []
        for ts in sorted(t for t in state["buffer"] if t <= watermark):
            matches += self.nfa.advance_time(nfa_state, ts)
            for row in self._sorted(state["buffer"].pop(ts)):
                state["seq"] += 1
                matches += self.nfa.process(nfa_state, Event((ts, state["seq"]), ts, row))
        matches += self.nfa.advance_time(nfa_state, watermark)
        state["nfa"] = None if self.nfa.is_empty(nfa_state) else nfa_state
        return matches

    def _sorted(self, rows: list[dict]) -> list[dict]:
        """Rows of one time in the ORDER BY after the time attribute (NULLs as ordered), else as they came."""
        for column, ascending, nulls_first in reversed(self.order):
            nulls_low = nulls_first == ascending
            rows = sorted(rows, key=lambda r: ((r[column] is not None) if nulls_low else (r[column] is None),
                                               r[column] if r[column] is not None else 0), reverse=not ascending)
        return rows

    def _row(self, key: tuple, path: tuple) -> dict[str, Any]:
        """A match's output row: its partition key and each atom over the match's rows."""
        def rows(variable: str) -> list[dict]:
            return [row for var, _, row in path if variable in (ALL, var)]
        out = dict(zip(self.partition, key))
        for atom in self.atoms:
            out[atom["name"]] = evaluate(atom["ir"], rows)
        return out
