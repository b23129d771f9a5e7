"""datagen's split bookkeeping, with a stand-in for Spark that returns the offset ranges it is asked for."""
from runtime.connectors.base import ConnectorContext
from runtime.connectors.datagen import DatagenReader


class RangesOnly:
    def datagen_ranges(self, params, ranges):
        return ranges


def reader(subtask=0, parallelism=1, **params):
    ctx = ConnectorContext("src", "src", subtask, parallelism, {"schema": "seq BIGINT", **params}, RangesOnly(),
                           None, "job", "attempt", "streaming", None)
    return DatagenReader(ctx)


def offsets(ranges):
    return sorted(o for lo, hi, step in ranges for o in range(lo, hi, step))


def test_a_bundle_never_reads_more_rows_than_asked():
    r = reader(rows_per_second=300)
    ranges, read, _ = r.next_bundle(1)
    assert read == 1 and len(offsets(ranges)) == 1


def test_subtasks_read_every_offset_once_and_a_restore_rescales():
    first = [reader(i, 2, number_of_rows=100) for i in range(2)]
    seen = []
    for r in first:
        ranges, _, _ = r.next_bundle(30)
        seen += offsets(ranges)
    states = [r.snapshot() for r in first]
    rest = [reader(i, 3, number_of_rows=100) for i in range(3)]
    for r in rest:
        r.restore(states)
        finished = False
        while not finished:
            ranges, read, finished = r.next_bundle(7)
            seen += offsets(ranges) if ranges else []
    assert sorted(seen) == list(range(100))


def test_a_rate_limited_source_catches_up_on_one_second_at_most_unless_it_is_realtime():
    from runtime.taskmanager.bundles import burst_rows as _burst_rows

    assert _burst_rows(reader(0, 2, rows_per_second=1_000)) == 500  # this subtask's share of one second
    assert _burst_rows(reader(rows_per_second=1_000, realtime=True, timestamp_start=0)) >= 2**62
    assert _burst_rows(reader()) >= 2**62  # no rate, no limit


def test_a_paced_stream_with_event_time_starts_now_and_a_restored_run_keeps_its_first_start(monkeypatch):
    import runtime.connectors.datagen as datagen
    from runtime.connectors.datagen import datagen_params

    monkeypatch.setattr(datagen.time, "time", lambda: 1_800_000_000.0)
    paced = datagen_params("seq BIGINT, ts TIMESTAMP", rows_per_second=100)
    assert (paced["realtime"], paced["timestamp_start"], paced["event_rate"]) == (True, 1_800_000_000.0, 100)
    assert "realtime" not in datagen_params("seq BIGINT", rows_per_second=100), "no event time: paced as before"
    assert "realtime" not in datagen_params("ts TIMESTAMP", rows_per_second=100, event_rate=10.0)
    assert "timestamp_start" not in datagen_params("ts TIMESTAMP", number_of_rows=10), "unpaced: the fixed default"

    first = reader(**paced)
    first.next_bundle(50)
    resumed = reader(**{**paced, "timestamp_start": 1_800_000_900.0})  # the same job, planned again later
    resumed.restore([first.snapshot()])
    assert resumed.ctx.params["timestamp_start"] == 1_800_000_000.0, "the same rows, due at once"
    explicit = reader(**{**paced, "timestamp_start": 5.0, "timestamp_start_now": False})
    explicit.restore([first.snapshot()])
    assert explicit.ctx.params["timestamp_start"] == 5.0, "a start the user chose stays"
