"""The lookup join operator alone, with a lookup function that records what it is asked: each bundle looks its
distinct keys up once, the cache answers within its TTL and forgets after it, a left join keeps rows without
a match, the least recently used key leaves a full cache."""
from __future__ import annotations

import pyarrow as pa

from runtime.taskmanager import lookup_join_operator
from runtime.taskmanager.lookup_join_operator import LookupCache, LookupJoinOperator


class RecordingLookup:
    """A dimension table in memory: ``rows`` by id; every lookup's keys are kept in ``asked``."""
    schema = pa.schema([("id", pa.int64()), ("name", pa.string())])

    def __init__(self, params, keys):
        self.rows, self.asked = params["rows"], []

    def lookup(self, keys: pa.Table) -> pa.Table:
        wanted = keys["id"].to_pylist()
        self.asked.append(sorted(wanted))
        found = [(k, self.rows[k]) for k in wanted if k in self.rows]
        return pa.table({"id": [k for k, _ in found], "name": [v for _, v in found]}, schema=self.schema)


def operator(monkeypatch, kind="inner", cache=True, rows=None):
    monkeypatch.setattr(lookup_join_operator, "lookup_function", RecordingLookup)
    lookup = {"rows": rows if rows is not None else {1: "Ada", 2: "Grace"}}
    if cache:
        lookup.update(cache_max_rows=10, cache_ttl_s=10.0)
    op = LookupJoinOperator({"kind": kind, "left_keys": ["customer"], "right_keys": ["id"],
                             "right_fields": [["id", "id0"], ["name", "name"]], "lookup": lookup})
    now = [0.0]
    if op.cache is not None:
        op.cache.clock = lambda: now[0]
    return op, now


def bundle(*customers):
    return pa.table({"order": list(range(len(customers))), "customer": pa.array(customers, pa.int32())})


def test_each_bundle_looks_its_distinct_keys_up_once_in_input_order(monkeypatch):
    op, _ = operator(monkeypatch, cache=False)
    out = op.process(bundle(2, 1, 2, 3))
    assert out.column_names == ["order", "customer", "id0", "name"]
    assert out.to_pylist() == [{"order": 0, "customer": 2, "id0": 2, "name": "Grace"},
                               {"order": 1, "customer": 1, "id0": 1, "name": "Ada"},
                               {"order": 2, "customer": 2, "id0": 2, "name": "Grace"}]
    assert op.function.asked == [[1, 2, 3]]


def test_a_left_join_keeps_rows_without_a_match_and_null_keys(monkeypatch):
    op, _ = operator(monkeypatch, kind="left", cache=False)
    out = op.process(pa.table({"order": [0, 1, 2], "customer": pa.array([1, 3, None], pa.int32())}))
    assert [(r["order"], r["name"]) for r in out.to_pylist()] == [(0, "Ada"), (1, None), (2, None)]


def test_the_cache_answers_within_its_ttl_and_asks_again_after_it(monkeypatch):
    rows = {1: "Ada", 2: "Grace"}
    op, now = operator(monkeypatch, rows=rows)
    op.process(bundle(1, 2, 7))
    rows[1] = "Ada Lovelace"
    now[0] = 9.9
    assert op.process(bundle(1, 7)).column("name").to_pylist() == ["Ada"]  # cached, the absent key too
    assert op.function.asked == [[1, 2, 7]]
    now[0] = 10.0
    assert op.process(bundle(1)).column("name").to_pylist() == ["Ada Lovelace"]
    assert op.function.asked == [[1, 2, 7], [1]]


def test_a_full_cache_drops_the_least_recently_used_key():
    cache = LookupCache(max_rows=2, ttl_s=60, clock=lambda: 0.0)
    empty = pa.table({"id": pa.array([], pa.int64())})
    cache.put((1,), empty)
    cache.put((2,), empty)
    assert cache.get((1,)) is not None  # 1 is now the most recently used
    cache.put((3,), empty)
    assert cache.get((2,)) is None and cache.get((1,)) is not None and cache.get((3,)) is not None
    missing = LookupCache(max_rows=2, ttl_s=60, cache_missing=False, clock=lambda: 0.0)
    missing.put((1,), empty)
    assert missing.get((1,)) is None
