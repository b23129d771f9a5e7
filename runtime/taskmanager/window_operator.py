"""The keyed event-time window operator: the stateful half of ``key_by(...).window(...).aggregate(...)``.

Upstream, inside the producer's Spark plan, rows are assigned to windows and pre-aggregated per
(key, window) into partials (runtime.taskmanager.spark.window_combine); after the hash exchange this
operator merges partials of the same (key, window) from all producers, keeps them as keyed state, and
emits a window's result when the watermark passes its end. Windows that need every row (session
windows, user-defined aggregates, distinct counts) travel raw and are aggregated here when they fire.
A SQL Python aggregate function's partial is its pickled accumulator, merged by the function's own
``merge`` (runtime.taskmanager.udf_aggregates); one whose accumulators do not merge travels raw.

State stays in Arrow tables and is merged with Arrow's hash aggregation (nulls group together, as in
SQL's GROUP BY); nothing here needs pandas, which a TaskManager then does not load (about 40 MB per
process) unless a job's own functions ask for it (``agg.udf`` receives a pandas Series).

Times are int64 microseconds since the epoch. A window [start, end) fires when the watermark reaches
``end - 1``; it is kept for ``allowed_lateness`` more so that late partials update it (and it fires
again); partials for windows past that are late: counted, not applied.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from runtime.ddl import ddl_type
from runtime.keygroups import KEY_GROUP_COLUMN
from runtime.taskmanager.arrow_groups import concat, group_by, regroup, semi_join
from runtime.taskmanager.sql_values import finish_average
from runtime.taskmanager.udf_aggregates import python_aggregates

WINDOW_START = "__window_start"
WINDOW_END = "__window_end"  # carried only by cumulating windows, whose ends differ for one start
EVENT_TIME = "__ts"
RECORDS = "__records"
SESSION = "__session"
END_OF_TIME = np.iinfo(np.int64).max
BEFORE_TIME = np.iinfo(np.int64).min
_MERGE = {"count": "sum", "sum": "sum", "min": "min", "max": "max",
          "udaf": "list"}  # pickled accumulators: listed by Acero, then folded by the function's merge
RAW_AGGREGATES = ("udf", "count_distinct")  # aggregates that need a window's rows, not partials
# how a window's rows are aggregated when it fires (Arrow's hash functions; count_distinct counts non-null values)
_RAW_FUNCTIONS = {"count": "count_all", "sum": "sum", "min": "min", "max": "max", "avg": "mean", "udf": "list",
                  "count_distinct": "count_distinct"}
_INTEGER_TYPES = {"TINYINT": pa.int8(), "SMALLINT": pa.int16(), "INT": pa.int32(), "BIGINT": pa.int64()}
COMPACT_FRACTION = 8  # unmerged partials are folded into the merged state once they are an eighth of it


def partial_columns(spec: dict) -> dict[str, str]:
    """Partial column name -> how partials merge, for one aggregate spec."""
    name, fn = spec["name"], spec["fn"]
    if fn == "avg":
        return {f"__p_{name}_sum": "sum", f"__p_{name}_cnt": "sum"}
    return {f"__p_{name}": _MERGE[fn]}


def needs_raw_rows(window: dict, aggregates: list[dict]) -> bool:
    """Session windows and aggregates without mergeable partials (``raw``: a Python one that cannot merge)."""
    return window["type"] == "session" or any(a["fn"] in RAW_AGGREGATES or a.get("raw") for a in aggregates)


class MergedPartials:
    """Partials keyed by (key, window, key group), merged at a cost that follows the bundle, not the state.

    Regrouping the whole state per bundle made every bundle (and so every checkpoint barrier queued
    behind bundles) cost O(state): 80-110 ms at 500,000 rows for a bundle of four keys. So a bundle is
    merged into a second, small table (``delta``: partials grouped among themselves), which is folded
    into the large one (``main``) only once it holds an eighth of main's rows: a stream of bundles over the
    same keys regroups only the delta, and the O(state) fold comes once per state/8 new (key, window)
    pairs. A group may sit in both tables; every read that needs one row per group regroups the rows it
    takes from the two (:meth:`take`, :meth:`table`). Measured into a state of 500,000 (key, window) rows, per
    bundle of known pairs (against the pandas index this replaced): 4 pairs 0.1 ms (9.8), 5,000 pairs 5.0 ms
    (10.0), 50,000 pairs 41 ms (20): bundles that each bring a large share of the state fold it every bundle
    or two, at Acero's 8-9 M rows/s."""
    def __init__(self, group: list[str], merges: dict[str, str],
                 folds: dict[str, Callable[[list | None], Any]] | None = None):
        self.group, self.merges = group, merges
        self.folds = folds or {}  # columns whose listed values become one again (pickled accumulators)
        self.main: pa.Table | None = None
        self.delta: pa.Table | None = None

    def regroup(self, table: pa.Table) -> pa.Table:
        """One row per group; each folded column's list of values folded back into one value."""
        out = regroup(table, self.group, self.merges)
        for column, fold in self.folds.items():
            values = [fold(v) for v in out[column].to_pylist()]
            out = out.set_column(out.schema.get_field_index(column), column, pa.array(values, table[column].type))
        return out

    def add(self, table: pa.Table) -> None:
        if self.main is None:
            self.main = self.regroup(table)
            return
        self.delta = self.regroup(concat([self.delta, table]))
        if self.delta.num_rows * COMPACT_FRACTION > self.main.num_rows:
            self.table()

    def table(self) -> pa.Table | None:
        """All state, one row per group (folding the delta in)."""
        if self.delta is not None and self.delta.num_rows:
            self.main = self.regroup(concat([self.main, self.delta]))
        self.delta = None
        return self.main

    def take(self, firing: Callable[[pa.Table], np.ndarray], keep: Callable[[pa.Table], np.ndarray]) -> pa.Table | None:
        """The rows ``firing`` selects, merged per group; rows outside ``keep`` are dropped from the state."""
        fired_main, self.main = split(self.main, firing, keep)
        fired_delta, self.delta = split(self.delta, firing, keep)
        if fired_main is None or fired_delta is None:
            return fired_main if fired_delta is None else fired_delta
        return self.regroup(concat([fired_main, fired_delta]))

    def rows(self) -> int:
        return sum(t.num_rows for t in (self.main, self.delta) if t is not None)


class WindowOperator:
    """Keyed event-time windows (tumbling, sliding, session) with allowed lateness, as a stateful operator of
    a chain."""
    def __init__(self, params: dict, udfs: dict[str, Callable] | None = None):
        self.keys: list[str] = params["keys"]
        self.window: dict = params["window"]
        self.aggregates: list[dict] = params["aggregates"]
        self.window_time = bool(params.get("window_time"))
        self.lateness = int(params.get("allowed_lateness_us", 0))
        self.udfs = udfs or {}
        self.python = python_aggregates(self.aggregates, udfs)  # SQL's Python aggregates by name
        self.raw = needs_raw_rows(self.window, self.aggregates)
        merges = {} if self.raw else {c: how for a in self.aggregates for c, how in partial_columns(a).items()}
        merges[RECORDS] = "sum"
        folds = {f"__p_{name}": python.fold for name, python in self.python.items()} if not self.raw else {}
        # a (key, window): cumulating windows share starts and differ in their ends
        self.bounds = self.keys + [WINDOW_START] + ([WINDOW_END] if self.window["type"] == "cumulate" else [])
        self.partials = MergedPartials(self.bounds + [KEY_GROUP_COLUMN], merges, folds)
        self.rows: pa.Table | None = None  # raw rows, for windows that aggregate rows when they fire
        self.watermark = BEFORE_TIME
        self.late_records = 0

    # -- input ---------------------------------------------------------------------------------
    def process(self, table: pa.Table) -> pa.Table | None:
        """Add a bundle of partials (or raw rows); returns updated results of already-fired windows."""
        if table.num_rows == 0:
            return None
        late = self._last_moment(table) + self.lateness <= self.watermark
        if late.any():
            self.late_records += _records(table.filter(late))
            table = table.filter(~late)
            if table.num_rows == 0:
                return None
        if self.raw:
            self.rows = concat([self.rows, table])
        else:
            self.partials.add(table)
        if self.window["type"] == "session" or self.watermark == BEFORE_TIME:
            return None
        # a late row re-fires its own key's window (as in Flink), not the other keys' windows of that time
        touched = self._ends(table) - 1 <= self.watermark  # most bundles: none fired
        if not touched.any():
            return None
        return self._results(self._state_of(table.filter(touched).select(self.bounds)))

    def _state_of(self, touched: pa.Table) -> pa.Table:
        """The state's rows (merged) of the windows in ``touched``."""
        state = self.rows if self.raw else self.partials.table()
        return semi_join(state, touched)

    def _ends(self, table: pa.Table) -> np.ndarray:
        """Each row's window end: its own column for cumulating windows, else start + size."""
        if WINDOW_END in table.column_names:
            return _times(table[WINDOW_END])
        return _times(table[WINDOW_START]) + self.window["size_us"]

    def _last_moment(self, table: pa.Table) -> np.ndarray:
        """The last microsecond of each row's window (for raw session rows: of the row's own gap)."""
        if self.window["type"] == "session":
            return _times(table[EVENT_TIME]) + (self.window["gap_us"] - 1)
        return self._ends(table) - 1

    # -- time ----------------------------------------------------------------------------------
    def on_watermark(self, watermark: int) -> pa.Table | None:
        """Fire the windows the watermark has passed and drop those past their allowed lateness."""
        if watermark <= self.watermark:
            return None
        previous, self.watermark = self.watermark, watermark
        if self.window["type"] == "session":
            return self._fire_sessions(watermark) if self.rows is not None and self.rows.num_rows else None

        def firing(table: pa.Table) -> np.ndarray:
            last = self._ends(table) - 1
            return (last <= watermark) & (last > previous)

        def keep(table: pa.Table) -> np.ndarray:
            return self._ends(table) - 1 + self.lateness > watermark

        if self.raw:
            out, self.rows = split(self.rows, firing, keep)
        else:
            out = self.partials.take(firing, keep)
        return self._results(out) if out is not None else None

    def _fire_sessions(self, watermark: int) -> pa.Table | None:
        """Sessions (runs of a key's rows less than the gap apart) whose last row plus the gap the watermark
        has passed: aggregated and removed from the state."""
        rows = self.rows.sort_by([(k, "ascending") for k in self.keys] + [(EVENT_TIME, "ascending")])
        gap, n = self.window["gap_us"], rows.num_rows
        new_session = np.zeros(n, dtype=bool)
        new_session[0] = True
        for key in self.keys:
            new_session[1:] |= _changed(rows[key])
        ts = _times(rows[EVENT_TIME])
        new_session[1:] |= (ts[1:] - ts[:-1]) >= gap
        firsts = np.flatnonzero(new_session)  # rows are sorted by key then time: a session is a run of rows
        lasts = np.append(firsts[1:] - 1, n - 1)
        session = np.cumsum(new_session) - 1
        done = (ts[lasts] + gap - 1 <= watermark)[session]
        if not done.any():
            return None
        self.rows = rows.filter(~done)
        fired = rows.filter(done)
        ids = session[done]
        fired = _with_column(fired, WINDOW_START, ts[firsts][ids])
        fired = _with_column(_with_column(fired, SESSION, ids), WINDOW_END, ts[lasts][ids] + gap)
        return self._aggregate_raw(fired, [SESSION, WINDOW_END])

    # -- results -------------------------------------------------------------------------------
    def _results(self, table: pa.Table) -> pa.Table:
        if self.raw:
            return self._aggregate_raw(table, [WINDOW_END] if WINDOW_END in table.column_names else [])
        out = self._keys_and_bounds(table)
        for spec in self.aggregates:
            name = spec["name"]
            if spec["fn"] == "avg":
                out[name] = _average(spec, table[f"__p_{name}_sum"], table[f"__p_{name}_cnt"])
            elif spec["fn"] == "udaf":
                python = self.python[name]
                out[name] = python.column([python.value_of_pickled(p) for p in table[f"__p_{name}"].to_pylist()])
            else:
                out[name] = _typed_sum(spec, table[f"__p_{name}"])
        return pa.table(out)

    def _aggregate_raw(self, rows: pa.Table, extra_group: list[str]) -> pa.Table:
        """Each window's aggregates over its rows, one row per (key, window), ordered by them."""
        group = self.keys + [WINDOW_START] + extra_group
        wanted = [w for spec in self.aggregates for w in _raw_aggregates(spec)]
        result = group_by(rows, group, wanted).sort_by([(c, "ascending") for c in group])
        out = self._keys_and_bounds(result)
        for spec in self.aggregates:
            name = spec["name"]
            column = f"__a_{name}"
            if spec["fn"] == "udaf":
                out[name] = self._apply_python(name, result)
            elif spec["fn"] == "udf":
                out[name] = self._apply_udf(name, result[column])
            elif spec["fn"] == "avg" and spec.get("type"):
                out[name] = _average(spec, result[f"{column}_sum"], result[f"{column}_count"])
            else:
                out[name] = _typed_sum(spec, result[column])
        return pa.table(out)

    def _apply_python(self, name: str, result: pa.Table) -> pa.Array:
        """A Python aggregate function over each window's rows (its arguments listed per window)."""
        python = self.python[name]
        columns = [result[f"__a_{name}_{j}"].to_pylist() for j in range(len(python.args))]
        counts = result[f"__a_{name}_n"].to_pylist()
        return python.column([python.value_of_rows([c[w] for c in columns], counts[w]) for w in range(len(counts))])

    def _keys_and_bounds(self, table: pa.Table) -> dict:
        """A result's first columns: the keys, then the window's bounds as UTC timestamps."""
        ends = self._ends(table)
        out = {**{k: table[k] for k in self.keys}, "window_start": _timestamps(_times(table[WINDOW_START])),
               "window_end": _timestamps(ends)}
        if self.window_time:  # SQL's window_time: the window's last millisecond, a time attribute after it
            out["window_time"] = _timestamps(ends - 1000)
        return out

    def _apply_udf(self, name: str, lists: pa.ChunkedArray) -> pa.Array:
        """A user-defined aggregate over each window's values, given as the pandas Series agg.udf promises
        (converted by Arrow once for all windows: pandas loads only for jobs with such aggregates)."""
        lists = lists.combine_chunks()
        values, offsets = lists.values.to_pandas(), lists.offsets.to_numpy()
        fn = self.udfs[name]
        return pa.array([fn(values.iloc[a:b].reset_index(drop=True)) for a, b in zip(offsets[:-1], offsets[1:])])

    # -- state ---------------------------------------------------------------------------------
    def snapshot(self) -> pa.Table | None:
        """Keyed state as one Arrow table carrying each row's key group, so it can be split on rescale."""
        state = self.rows if self.raw else self.partials.table()
        return state if state is not None and state.num_rows else None

    def restore(self, tables: list[pa.Table], key_groups: range) -> None:
        """Take the rows of ``tables`` whose key group this subtask now owns."""
        table = concat(tables)
        if table is None:
            return
        kg = table[KEY_GROUP_COLUMN]
        table = table.filter(pc.and_(pc.greater_equal(kg, key_groups.start), pc.less(kg, key_groups.stop)))
        if self.raw:
            self.rows = table
        elif table.num_rows:
            self.partials = MergedPartials(self.partials.group, self.partials.merges, self.partials.folds)
            self.partials.add(table)

    @property
    def state_rows(self) -> int:
        return (self.rows.num_rows if self.rows is not None else 0) if self.raw else self.partials.rows()


def _raw_aggregates(spec: dict) -> list[tuple]:
    """How a window's raw rows are aggregated for ``spec`` when it fires (Acero aggregates, arrow_groups); a
    Python aggregate's arguments listed per window, with the window's row count."""
    name = spec["name"]
    if spec["fn"] == "udaf":
        return [(arg, "list", None, f"__a_{name}_{j}") for j, arg in enumerate(spec["args"])] + \
            [([], "count_all", None, f"__a_{name}_n")]
    wanted = [([] if spec["fn"] == "count" else spec["column"], _RAW_FUNCTIONS[spec["fn"]], None, f"__a_{name}")]
    if spec["fn"] == "avg" and spec.get("type"):  # a typed AVG: its sum and count, divided as SQL does
        wanted += [(spec["column"], fn, None, f"__a_{name}_{fn}") for fn in ("sum", "count")]
    return wanted


def split(table: pa.Table | None, firing: Callable[[pa.Table], np.ndarray],
          keep: Callable[[pa.Table], np.ndarray]) -> tuple[pa.Table | None, pa.Table | None]:
    """The rows of ``table`` that ``firing`` selects (None if none), and ``table`` without the rows ``keep``
    drops (the same table, not a copy, when it keeps them all)."""
    if table is None or not table.num_rows:
        return None, table
    fire, kept = firing(table), keep(table)
    return (table.filter(fire) if fire.any() else None), (table if kept.all() else table.filter(kept))


def _with_column(table: pa.Table, name: str, values: np.ndarray) -> pa.Table:
    """``table`` with column ``name`` set to ``values``, replacing one of that name."""
    at = table.schema.get_field_index(name)
    return table.set_column(at, name, pa.array(values)) if at >= 0 else table.append_column(name, pa.array(values))


def _records(table: pa.Table) -> int:
    """Input rows that ``table`` stands for: its partials' record counts, or its raw rows."""
    if RECORDS in table.column_names:
        return int(pc.sum(table[RECORDS]).as_py() or 0)
    return table.num_rows


def _times(column: pa.ChunkedArray) -> np.ndarray:
    """Microsecond times (window bounds, event times) as int64 numbers."""
    return column.to_numpy() if column.type == pa.int64() else pc.cast(column, pa.int64()).to_numpy()


def _typed_sum(spec: dict, column):
    """A SQL SUM of an integer type in that type, wrapped around as Flink's is; other results as they are."""
    arrow_type = _INTEGER_TYPES.get(spec.get("type") or "") if spec["fn"] == "sum" else None
    return column if arrow_type is None else column.cast(arrow_type, safe=False)


def _average(spec: dict, sums, counts):
    """AVG from sums and counts: in the SQL result type (runtime.taskmanager.sql_values), else a float."""
    if not spec.get("type"):
        return pc.divide(pc.cast(sums, pa.float64()), pc.cast(counts, pa.float64()))
    values = [None if not n else finish_average(s, n, spec["type"]) for s, n in zip(sums.to_pylist(), counts.to_pylist())]
    return pa.array(values, ddl_type(spec["type"]))


def _timestamps(micros: np.ndarray) -> pa.Array:
    """Window bounds as UTC timestamps."""
    return pa.array(micros, pa.int64()).cast(pa.timestamp("us", tz="UTC"))


def _changed(column: pa.ChunkedArray) -> np.ndarray:
    """For each row after the first, whether its value differs from the row before (nulls equal nulls)."""
    after, before = column[1:], column[:-1]
    differs = pc.fill_null(pc.not_equal(after, before), True)
    both_null = pc.and_(pc.is_null(after), pc.is_null(before))
    return pc.and_not(differs, both_null).to_numpy(zero_copy_only=False)
