"""The JobManager's buffer of collected rows: offsets, de-duplication, and what a new leader inherits."""
import pyarrow as pa
import pytest

from runtime.checkpoint.storage import StorageError

from runtime.arrow_ipc import table_to_b64
from runtime.jobmanager.collect import CollectBuffer
from runtime.messages import CollectResult


def delivery(values, subtask=0, checkpoint=None):
    table = pa.table({"n": values})
    return CollectResult("job", "attempt", "sink-op", subtask, table_to_b64(table), table.num_rows, checkpoint)


def everything(buffer) -> list:
    table, _ = buffer.read(0, 10**9)
    return table.column("n").to_pylist() if table is not None else []


def test_a_checkpointed_delivery_counts_once_however_often_it_is_re_sent():
    buffer = CollectBuffer()
    for _ in range(2):
        buffer.add(delivery([1, 2], subtask=0, checkpoint=3))
    buffer.add(delivery([3], subtask=1, checkpoint=3))
    assert everything(buffer) == [1, 2, 3] and buffer.total_rows == 3


def test_a_successor_reading_the_kept_deliveries_serves_the_same_offsets_and_drops_the_same_repeats(tmp_path):
    first = CollectBuffer(data_dir=str(tmp_path))
    first.add(delivery([1, 2], checkpoint=1))
    first.add(delivery([3], subtask=1, checkpoint=1))
    first.add(delivery([4, 5], checkpoint=2))
    successor = CollectBuffer(data_dir=str(tmp_path))
    assert everything(successor) == everything(first) == [1, 2, 3, 4, 5]
    assert successor.read(3, 10)[1] == first.read(3, 10)[1] == 5
    successor.add(delivery([4, 5], checkpoint=2))  # re-sent by a subtask restored from checkpoint 2
    successor.add(delivery([6], checkpoint=3))
    assert everything(successor) == [1, 2, 3, 4, 5, 6]


def test_evicted_rows_leave_the_kept_files_too(tmp_path):
    buffer = CollectBuffer(max_rows=2, data_dir=str(tmp_path))
    for i in range(4):
        buffer.add(delivery([i], checkpoint=i))
    successor = CollectBuffer(data_dir=str(tmp_path))
    assert everything(successor) == everything(buffer) == [2, 3]
    assert successor.dropped_rows == buffer.dropped_rows == 2 and len(list((tmp_path / 'results').iterdir())) == 2


def test_a_delivery_the_storage_cannot_keep_is_refused_and_taken_when_re_sent(tmp_path):
    (tmp_path / "results").write_text("a file where the directory should be")
    buffer = CollectBuffer(data_dir=f"file://{tmp_path}")
    with pytest.raises(StorageError):
        buffer.add(delivery([1, 2], checkpoint=1))
    assert everything(buffer) == [] and buffer.total_rows == 0, "nothing readable that a successor would lack"
    (tmp_path / "results").unlink()
    buffer.add(delivery([1, 2], checkpoint=1))  # re-sent by the sink restored from checkpoint 1
    assert everything(buffer) == [1, 2]
    assert everything(CollectBuffer(data_dir=f"file://{tmp_path}")) == [1, 2]


def test_a_delivery_to_a_jobmanager_fenced_out_is_neither_kept_nor_failed_over(tmp_path):
    from runtime.checkpoint.fencing import fenced_by

    class Deposed:
        token = {"role": "jobmanager", "session": "s1"}

        def refusal(self):
            return "leader session s1 holds no confirmed lease"

    failing = []
    buffer = CollectBuffer(data_dir=str(tmp_path), on_unkept=failing.append)
    with fenced_by(Deposed()):
        buffer.add(delivery([1, 2], checkpoint=4))
    assert everything(buffer) == [] and not failing, "the new leader gets it from the restored sink"
    assert not any(tmp_path.rglob("*.arrow"))
    buffer.add(delivery([1, 2], checkpoint=4))  # not marked delivered: taken when it comes again
    assert everything(buffer) == [1, 2]
