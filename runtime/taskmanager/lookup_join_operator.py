"""The processing-time lookup join (``JOIN dim FOR SYSTEM_TIME AS OF s.proc_time AS d ON s.k = d.id``): each row
of the stream is joined with the dimension table's rows as they are when the row passes, fetched from the
table's connector (its lookup function, runtime.connectors.registry.lookup_function).

Per bundle the distinct keys are looked up at once; with ``cache_max_rows`` and ``cache_ttl_s`` (the jdbc
connector's ``lookup.cache.max-rows`` and ``lookup.cache.ttl``) a key's rows are kept that long, the least
recently used dropped beyond the size, so a change in the table is seen once its key's entry expires. The
cache is no state: Flink does not checkpoint it either, and a restored join looks keys up afresh. An inner
join drops rows without a match, a left join keeps them with NULLs; the stream's changelog column passes
through.
"""
from __future__ import annotations

import collections
import time
from collections.abc import Callable

import pyarrow as pa
import pyarrow.compute as pc

from runtime.connectors.registry import lookup_function


class LookupCache:
    """Rows per key, each entry kept for ``ttl_s`` seconds, at most ``max_rows`` keys (least recently used out)."""

    def __init__(self, max_rows: int, ttl_s: float, cache_missing: bool = True, clock: Callable[[], float] = time.monotonic):
        self.max_rows, self.ttl_s, self.cache_missing, self.clock = max_rows, ttl_s, cache_missing, clock
        self.entries: collections.OrderedDict[tuple, tuple[float, pa.Table]] = collections.OrderedDict()

    def get(self, key: tuple) -> pa.Table | None:
        """The key's rows while fresh (an empty table for a key known to be absent), else None."""
        found = self.entries.get(key)
        if found is None:
            return None
        if self.clock() >= found[0]:
            del self.entries[key]
            return None
        self.entries.move_to_end(key)
        return found[1]

    def put(self, key: tuple, rows: pa.Table) -> None:
        """Keep ``rows`` for ``key`` (an absent key only with caching-missing-key)."""
        if rows.num_rows == 0 and not self.cache_missing:
            return
        self.entries[key] = (self.clock() + self.ttl_s, rows)
        self.entries.move_to_end(key)
        while len(self.entries) > self.max_rows:
            self.entries.popitem(last=False)


class LookupJoinOperator:
    """Joins each bundle with the rows its keys find in the dimension table (cached when configured)."""
    late_records = 0

    def __init__(self, params: dict, udf=None):
        self.kind = params["kind"]
        self.left_keys, self.right_keys = list(params["left_keys"]), list(params["right_keys"])
        self.right_fields: list[tuple[str, str]] = [tuple(p) for p in params["right_fields"]]  # (column, output)
        lookup = params["lookup"]
        self.function = lookup_function(lookup, self.right_keys)
        self.cache = (LookupCache(int(lookup["cache_max_rows"]), float(lookup["cache_ttl_s"]),
                                  bool(lookup.get("cache_missing_key", True)))
                      if lookup.get("cache_max_rows") else None)

    @property
    def state_rows(self) -> int:
        return 0

    def process(self, table: pa.Table) -> pa.Table | None:
        """The bundle joined with its keys' current rows of the dimension table."""
        dimension = self._rows_for(table)
        renamed = dimension.rename_columns([dict(self.right_fields).get(n, n) for n in dimension.column_names])
        outputs = [out for _, out in self.right_fields]
        join_keys = [f"__lk{i}" for i in range(len(self.left_keys))]
        left = table.append_column("__order", pa.array(range(table.num_rows), pa.int64()))
        left = _with_keys(left, self.left_keys, join_keys)
        right = _with_keys(renamed, [dict(self.right_fields)[k] for k in self.right_keys], join_keys,
                           [left[k].type for k in join_keys])
        right = right.select(join_keys + outputs)
        joined = left.join(right, join_keys, join_type="inner" if self.kind == "inner" else "left outer",
                           use_threads=False)
        joined = joined.take(pc.sort_indices(joined["__order"]))
        return joined.select(table.column_names + outputs)

    def _rows_for(self, table: pa.Table) -> pa.Table:
        """The dimension rows of the bundle's distinct non-null keys: cached ones, the rest looked up now."""
        keys = table.select(self.left_keys).drop_null().group_by(self.left_keys, use_threads=False).aggregate([])
        keys = keys.rename_columns(self.right_keys)
        if self.cache is None:
            return self.function.lookup(keys) if keys.num_rows else self._empty()
        found: list[pa.Table] = []
        missing: list[tuple] = []
        for key in zip(*(keys[k].to_pylist() for k in self.right_keys)):
            rows = self.cache.get(key)
            if rows is None:
                missing.append(key)
            else:
                found.append(rows)
        if missing:
            fetched = self.function.lookup(pa.table(dict(zip(self.right_keys, zip(*missing)))))
            for key, rows in _by_key(fetched, self.right_keys, missing).items():
                self.cache.put(key, rows)
                found.append(rows)
        return pa.concat_tables(found) if found else self._empty()

    def _empty(self) -> pa.Table:
        return self.function.schema.empty_table()

    def on_watermark(self, watermark: int) -> None:
        return None

    def snapshot(self) -> None:
        return None

    def restore(self, tables: list[pa.Table], key_groups: range) -> None:
        pass


def _with_keys(table: pa.Table, columns: list[str], names: list[str], types: list | None = None) -> pa.Table:
    """``table`` plus copies of ``columns`` under ``names`` (cast to ``types``: Arrow joins keys of one type)."""
    for i, (column, name) in enumerate(zip(columns, names)):
        values = table[column] if types is None else table[column].cast(types[i])
        table = table.append_column(name, values)
    return table


def _by_key(rows: pa.Table, keys: list[str], wanted: list[tuple]) -> dict[tuple, pa.Table]:
    """``rows`` split by their key (every wanted key present, absent ones with no rows)."""
    positions: dict[tuple, list[int]] = {key: [] for key in wanted}
    for i, key in enumerate(zip(*(rows[k].to_pylist() for k in keys))):
        positions.setdefault(key, []).append(i)
    return {key: rows.take(pa.array(idx, pa.int64())) for key, idx in positions.items()}
