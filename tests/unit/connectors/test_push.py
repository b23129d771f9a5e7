"""The push source without a cluster: schema checks on pushed rows, and the log's offset bookkeeping that
makes a restored subtask read exactly what it had not yet read."""
import asyncio
import datetime
import decimal
import os

import pandas as pd
import pyarrow as pa
import pytest

from runtime.api.environment import StreamExecutionEnvironment
from runtime.checkpoint import storage
from runtime.checkpoint.coordinator import CompletedCheckpoint, SubtaskSnapshot
from runtime.connectors.base import ConnectorContext, ConnectorError
from runtime.connectors.registry import source_reader
from runtime.connectors.push import PushError
from runtime.jobmanager import push as jm_push
from runtime.jobmanager.push import PushLogs, PushNotKept, SourceRefused, UnknownSource

SCHEMA = "user BIGINT, url STRING, ts TIMESTAMP"


def logs(*names, schema=SCHEMA) -> PushLogs:
    env = StreamExecutionEnvironment()
    for name in names:
        env.push_source(schema, name=name).collect()
    return PushLogs(env.job_graph("push"))


def clicks(first: int, count: int) -> list[dict]:
    start = datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc)
    return [{"user": i, "url": f"/p{i}", "ts": start + datetime.timedelta(seconds=i)} for i in range(first, first + count)]


# -- what a push must look like ---------------------------------------------------------------
def test_rows_in_every_accepted_form_arrive_in_the_schema_types():
    log = logs("clicks in").find("clicks in")
    frame = pd.DataFrame(clicks(0, 2))
    table = pa.table({"url": ["/x"], "user": pa.array([7], pa.int32()), "ts": ["2024-01-01T00:00:05"]})
    json_like = [{"user": 9, "url": "/y", "ts": "2024-01-01T00:00:06Z"}]
    for rows in (frame, table, json_like, []):
        log.append(rows)
    got, _ = log.read(0, 1, 0, 100)
    assert got.schema.names == ["user", "url", "ts"]
    assert got.schema.types == [pa.int64(), pa.string(), pa.timestamp("us", tz="UTC")]
    assert got.column("user").to_pylist() == [0, 1, 7, 9]
    assert got.column("ts")[3].as_py() == datetime.datetime(2024, 1, 1, 0, 0, 6, tzinfo=datetime.timezone.utc)


@pytest.mark.parametrize("rows, needle", [
    ([{"user": 1, "url": "/a"}], "missing ['ts']"),
    ([{"user": 1, "url": "/a", "ts": None, "referrer": "x"}], "unknown ['referrer']"),
    ([{"user": "one", "url": "/a", "ts": None}], "field 'user' must be int64, got string"),
    ([{"user": 1, "url": 5, "ts": None}], "field 'url' must be string, got int64"),
    ([{"user": 1.5, "url": "/a", "ts": None}], "field 'user' must be int64, got double"),
    ([{"user": 1, "url": "/a", "ts": "yesterday"}], "field 'ts'"),
    ([{"user": 1, "url": "/a", "ts": None}, {"user": 2, "url": "/b"}], "row 1 has fields"),
    ([{"user": 1, "url": "/a", "ts": None}, {"user": "2", "url": "/b", "ts": None}],
     "field 'user' must be int64; its values are of mixed"),
    ([[1, "/a", None]], "every row must be an object"),
    ("user=1", "must be a pandas DataFrame, a pyarrow Table or a list of dicts"),
])
def test_rows_that_do_not_fit_are_refused_whole_naming_the_source_and_the_field(rows, needle):
    log = logs("clicks in").find("clicks in")
    log.append(clicks(0, 3))
    with pytest.raises(PushError) as refused:
        log.append(rows)
    assert needle in str(refused.value) and "'clicks in'" in str(refused.value)
    assert log.total_rows == 3, "nothing of a refused push is kept"


def test_values_are_checked_against_narrow_and_not_null_fields():
    log = logs("n", schema="small INT NOT NULL, price DECIMAL(6, 2)").find("n")
    log.append(pa.table({"small": [1, 2], "price": [3, 4.25]}))
    with pytest.raises(PushError, match="field 'small'.*not in range"):
        log.append(pa.table({"small": [2**40], "price": [1]}))
    with pytest.raises(PushError, match="field 'small' is NOT NULL"):
        log.append(pa.table({"small": pa.array([None, 1], pa.int64()), "price": [1, 2]}))
    assert log.read(0, 1, 0, 10)[0].column("price").to_pylist() == [decimal.Decimal("3.00"), decimal.Decimal("4.25")]


def test_sources_are_found_by_name_or_operator_id_and_a_bad_schema_is_named():
    found = logs("a", "b")
    assert found.find("b") is found.find(found.find("b").source_id)
    with pytest.raises(UnknownSource, match="'c' not found.*a \\(source-1\\)"):
        found.find("c")
    with pytest.raises(ConnectorError, match="push source 'bad'"):
        StreamExecutionEnvironment().push_source("user BIGINTEGER", name="bad")
    env = StreamExecutionEnvironment()
    env.push_source(SCHEMA, name="twice")
    with pytest.raises(ValueError, match="already a push source named 'twice'"):
        env.push_source(SCHEMA, name="twice")


def test_a_closed_source_takes_no_rows():
    log = logs("in").find("in")
    log.close()
    with pytest.raises(SourceRefused, match="closed"):
        log.append(clicks(0, 1))


# -- offsets, shares and replay ---------------------------------------------------------------
class ArrowAsIs:
    """Stands in for the TaskManager's Spark runner: the 'DataFrame' is the Arrow table itself."""

    def from_arrow(self, table):
        return table


def reader(push_logs: PushLogs, subtask: int, parallelism: int, source: str = "source-1"):
    ctx = ConnectorContext(source, "in", subtask, parallelism, {"connector": "push", "schema": SCHEMA}, ArrowAsIs(),
                           None, "job", "attempt", "streaming", None, request=push_logs.fetch)
    return source_reader(ctx)


def drain(r, max_rows: int) -> tuple[list[int], bool]:
    """Read until the reader has nothing new: the users read, and whether the source finished."""
    seen, finished = [], False
    while True:
        table, read, finished = r.next_bundle(max_rows)
        if not read:
            return seen, finished
        assert table.num_rows == read <= max_rows
        seen += table.column("user").to_pylist()


def test_subtasks_share_the_offsets_and_finish_once_the_closed_log_is_read():
    push_logs = logs("in")
    log = push_logs.find("in")
    readers = [reader(push_logs, i, 3) for i in range(3)]
    seen = []
    for first, count in ((0, 10), (10, 1), (11, 7)):  # pushes smaller and larger than the parallelism
        log.append(clicks(first, count))
        for r in readers:
            got, finished = drain(r, 2)
            assert not finished, "an open source never finishes"
            assert all(user % 3 == r.ctx.subtask_index for user in got), "subtask i reads offsets i, i+p, ..."
            seen += got
    assert sorted(seen) == list(range(18))
    log.close()
    assert all(r.next_bundle(5) == (None, 0, True) for r in readers)


def test_a_restored_subtask_reads_again_exactly_what_followed_its_snapshot():
    push_logs = logs("in")
    log = push_logs.find("in")
    log.append(clicks(0, 20))
    before = reader(push_logs, 1, 2)
    first = before.next_bundle(3)[0].column("user").to_pylist()
    state = before.snapshot()  # a checkpoint
    lost, _ = drain(before, 4)  # read after it, then the task fails
    restored = reader(push_logs, 1, 2)
    restored.restore([{"subtask": 0, "parallelism": 2, "epoch": log.epoch, "position": 12}, state])
    assert drain(restored, 4)[0] == lost
    assert sorted(first + lost) == list(range(1, 20, 2))


def test_positions_from_another_jobs_log_start_at_its_beginning():
    push_logs = logs("in")
    push_logs.find("in").append(clicks(0, 4))
    r = reader(push_logs, 0, 1)
    r.restore([{"subtask": 0, "parallelism": 1, "epoch": "from-a-savepoint", "position": 1_000}])
    assert drain(r, 10)[0] == [0, 1, 2, 3]


def test_one_reply_holds_at_most_the_fetch_budget(monkeypatch):
    monkeypatch.setattr(jm_push, "FETCH_MAX_ROWS", 4)
    push_logs = logs("in")
    push_logs.find("in").append(clicks(0, 10))
    r = reader(push_logs, 0, 1)
    assert r.next_bundle(100)[1] == 4
    assert drain(r, 100)[0] == list(range(4, 10))


def test_a_fetch_for_a_share_that_does_not_exist_fails_the_reader_with_the_reason():
    with pytest.raises(ConnectorError, match="no push source 'source-9'"):
        reader(logs("in"), 0, 1, source="source-9").next_bundle(10)


# -- kept in the HA storage, and trimmed --------------------------------------------------------
def kept_logs(data_dir, retained=list) -> PushLogs:
    env = StreamExecutionEnvironment()
    env.push_source(SCHEMA, name="in").collect()
    return PushLogs(env.job_graph("push"), f"file://{data_dir}", retained)


def test_a_successor_serves_the_same_log_with_the_same_epoch_and_positions(tmp_path):
    first = kept_logs(tmp_path)
    log = first.find("in")
    log.append(clicks(0, 5))
    log.append(clicks(5, 3))
    before = reader(first, 0, 2)
    read_before, _ = drain(before, 2)
    state = before.snapshot()
    log.close()
    successor = kept_logs(tmp_path)  # a new leader resumes the job
    again = successor.find("in")
    assert (again.epoch, again.total_rows, again.closed) == (log.epoch, 8, True)
    restored = reader(successor, 0, 2)
    restored.restore([state])
    assert drain(restored, 10) == ([], True), "positions restored from a checkpoint count in the same log"
    assert read_before == [0, 2, 4, 6]


def test_a_push_the_storage_cannot_keep_is_refused_whole(tmp_path):
    push_logs = kept_logs(tmp_path)
    log = push_logs.find("in")
    directory = log.directory[len("file://"):]
    for name in os.listdir(directory):
        os.remove(os.path.join(directory, name))
    os.rmdir(directory)
    open(directory, "w").close()  # a file where the log's directory should be
    with pytest.raises(PushNotKept, match="HA storage did not keep"):
        log.append(clicks(0, 3))
    assert log.total_rows == 0 and log.read(0, 1, 0, 10) == (None, 0)


def checkpoint_at(tmp_path, checkpoint_id, log, positions) -> CompletedCheckpoint:
    """A retained checkpoint whose push source subtasks snapshot ``positions`` (one per subtask)."""
    subtasks = []
    for i, position in enumerate(positions):
        pointer = f"file://{tmp_path}/chk-{checkpoint_id}/v-{i}"
        storage.write_json(f"{pointer}/state.json", {"source": {"subtask": i, "parallelism": len(positions),
                                                                "epoch": log.epoch, "position": position}})
        subtasks.append(SubtaskSnapshot("v", i, pointer, [log.source_id], 0))
    return CompletedCheckpoint(checkpoint_id, 0.0, False, f"file://{tmp_path}/chk-{checkpoint_id}", subtasks, 0.0, 0)


def test_the_log_is_trimmed_below_what_the_oldest_retained_checkpoint_restores_to(tmp_path):
    retained: list = []

    async def body():
        push_logs = kept_logs(tmp_path / "ha", lambda: retained)
        log = push_logs.find("in")
        for first in range(0, 40, 10):  # four batches of ten rows: offsets 0-9, 10-19, 20-29, 30-39
            log.append(clicks(first, 10))
        retained.append(checkpoint_at(tmp_path, 1, log, [21, 24]))  # subtask 0 at 21, subtask 1 at 24
        retained.append(checkpoint_at(tmp_path, 2, log, [33, 36]))
        log.append(clicks(40, 1))
        while push_logs._trimming:
            await asyncio.sleep(0.01)
        assert log.first_offset == 20, "batches wholly below offset 21 go, the one holding it stays"
        assert sorted(os.listdir(log.directory[len("file://"):])) == [
            "000000000000020.arrow", "000000000000030.arrow", "000000000000040.arrow", "epoch"]
        restored = reader(push_logs, 1, 2)
        restored.restore([{"subtask": 1, "parallelism": 2, "epoch": log.epoch, "position": 24}])
        assert drain(restored, 100)[0] == list(range(25, 41, 2))
        with pytest.raises(ConnectorError, match="trimmed"):
            too_old = reader(push_logs, 0, 2)
            too_old.restore([{"subtask": 0, "parallelism": 2, "epoch": log.epoch, "position": 3}])
            too_old.next_bundle(10)
        assert kept_logs(tmp_path / "ha").find("in").first_offset == 20, "a successor starts where it was trimmed"
    asyncio.run(body())


def test_without_a_retained_checkpoint_nothing_is_trimmed(tmp_path):
    async def body():
        push_logs = kept_logs(tmp_path)
        push_logs.find("in").append(clicks(0, 10))
        await asyncio.sleep(0)
        assert push_logs.find("in").first_offset == 0 and not push_logs._trimming
    asyncio.run(body())


def test_a_retried_push_is_taken_once_also_by_a_successor(tmp_path):
    log = kept_logs(tmp_path).find("in")
    assert log.append(clicks(0, 3), push_id="p-1") == (0, 3)
    assert log.append(clicks(0, 3), push_id="p-1") == (0, 3), "the retry gets the first offsets"
    assert log.append(clicks(3, 2), push_id="p-2") == (3, 5)
    successor = kept_logs(tmp_path).find("in")
    assert successor.append(clicks(3, 2), push_id="p-2") == (3, 5)
    assert successor.total_rows == 5
    with pytest.raises(PushError, match="push_id must be"):
        successor.append(clicks(5, 1), push_id="../escape")
