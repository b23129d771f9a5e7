"""Recording a job's event stream and replaying it into a fresh model: the file's format, what is kept of other
jobs, a bad file named by its line, and a replay that ends where the recorded job ended."""
from __future__ import annotations

import json
import threading

import pyarrow as pa
import pytest

from runtime import events
from runtime.arrow_ipc import table_to_b64
from runtime.codec import to_plain
from runtime.views.columns import restart_columns, slot_columns
from runtime.views.model import ClusterModel
from runtime.views.recording import ANOTHER_JOB, Recorder, RecordingError, only_job, read
from runtime.views.replay import Replay
from tests.unit.views.test_model import JOB, VERTEX, Feed, rest_tm, snapshot

OTHER = "o" * 32
PLAN = {"nodes": [{"id": VERTEX, "description": "Source: datagen -> Collect", "parallelism": 2, "inputs": []}]}


class RecordedJobClient:
    """What the Recorder asks of a JobClient, answered from memory: two pages of rows, then the end."""

    def __init__(self, state: str = "FINISHED"):
        self.job_id = JOB
        self.end_state = state
        self.pages = [pa.table({"n": [1, 2]}), pa.table({"n": [3]})]
        self.may_end = threading.Event()

    def details(self) -> dict:
        return {"jid": JOB, "name": "clicks", "state": "RUNNING", "vertices": []}

    def checkpoints(self) -> dict:
        return {"history": [{"id": 1, "status": "COMPLETED", "trigger_timestamp": 1_000_000, "state_size": 10}]}

    def plan(self) -> dict:
        return PLAN

    def exceptions(self) -> dict:
        return {"root-exception": "ValueError: boom"}

    def fetch(self, offset: int, limit: int):
        done = offset >= 3 and self.may_end.is_set()
        page = self.pages[0] if offset == 0 else self.pages[1] if offset == 2 else pa.table({"n": pa.array([], pa.int64())})
        return page, offset + page.num_rows, done, self.end_state if done else "RUNNING"


def record(tmp_path, state="FINISHED"):
    """A recording made from a model fed like the event stream feeds it, while another job runs too."""
    model = ClusterModel()
    model.reset(snapshot([rest_tm("tm-a", busy={1: (OTHER, "theirs", ["x"])}), rest_tm("tm-b")]))
    feed = Feed(model)
    job = RecordedJobClient(state)
    path = tmp_path / "clicks.jsonl"
    recorder = Recorder(path, job, "clicks", model,
                        lambda: snapshot([rest_tm("tm-a", busy={1: (OTHER, "theirs", ["x"])}), rest_tm("tm-b")],
                                         jobs=[{"jid": JOB, "name": "clicks", "state": "RUNNING"},
                                               {"jid": OTHER, "name": "theirs", "state": "RUNNING"}], seq=1),
                        linger=0.0).start()
    feed(events.SlotAllocated("tm-a", 0, "a0", JOB, "clicks"))
    feed(events.SlotAllocated("tm-b", 0, "b0", OTHER, "theirs"))
    feed(events.JobStatusChanged(OTHER, "theirs", "FAILED", "RUNNING", 0))
    feed(events.TaskStatusChanged(JOB, VERTEX, "Source: datagen -> Collect", 0, "att0", 0, "RUNNING", "tm-a", 0))
    feed(events.TaskManagerLost("tm-a", "heartbeat timed out"))
    feed(events.JobRestarting(JOB, 1, "TaskManager tm-a lost", 1.0))
    feed(events.CheckpointRestored(JOB, 1, "file:///chk-1"))
    feed(events.JobStatusChanged(JOB, "clicks", state, "RUNNING", 1))
    job.may_end.set()
    assert recorder.finished.wait(10), "the recording ends once the job's rows are all read"
    return path, recorder


def test_a_recording_holds_the_job_its_history_plan_and_rows_and_leaves_other_jobs_out(tmp_path):
    path, recorder = record(tmp_path)
    assert recorder.error is None
    recording = read(path)
    assert recording.header["format"] == "flinkbench-recording" and recording.header["version"] == 1
    assert (recording.job_id, recording.name) == (JOB, "clicks") and recording.complete
    kinds = [line["kind"] for line in recording.lines]
    assert kinds[:3] == ["message", "job", "checkpoints"] and "plan" in kinds and kinds[-1] == "end"
    messages = [line["message"] for line in recording.lines if line["kind"] == "message"]
    first = messages[0]
    assert first["type"] == "ClusterSnapshot" and [j["jid"] for j in first["jobs"]] == [JOB], "only the job recorded"
    slots = {(tm["id"], s["index"]): s["job-id"] for tm in first["taskmanagers"] for s in tm["slots"]}
    assert slots[("tm-a", 1)] == ANOTHER_JOB, "another job's slot stays taken, without its name"
    assert all(m.get("job_id") in (None, JOB, ANOTHER_JOB) for m in messages), "no event names the other job"
    assert not any(m["type"] == "JobStatusChanged" and m.get("name") == "theirs" for m in messages)
    rows = pa.concat_tables([line["table"] for line in recording.lines if line["kind"] == "rows"])
    assert rows.column("n").to_pylist() == [1, 2, 3], "every row once, in order"
    assert recording.lines[-1]["state"] == "FINISHED"


def test_a_failed_job_records_its_root_cause(tmp_path):
    path, _ = record(tmp_path, state="FAILED")
    end = read(path).lines[-1]
    assert end == {"t": end["t"], "kind": "end", "state": "FAILED", "failure": "ValueError: boom"}


def test_a_replay_plays_the_failover_into_a_fresh_model_and_serves_the_rows(tmp_path):
    path, _ = record(tmp_path)
    replay = Replay(read(path), ClusterModel(), speed=1000).start()
    assert replay.wait(10) and not replay.stopped_early
    model = replay.model
    job = model.jobs[JOB]
    assert (job.state, job.restarts) == ("FINISHED", 1)
    assert model.taskmanagers["tm-a"].state == "LOST"
    assert restart_columns(model, JOB)["cause"] == ["TaskManager tm-a lost"]
    assert job.checkpoints[1].restored_ts is not None, "the restored checkpoint is marked"
    assert "another job" in slot_columns(model)["job_name"], "the other job's slot shows taken"
    assert job.plan and job.plan[0].name == "Source: datagen -> Collect"
    table, nxt, done, state = replay.job.fetch(0, 100)
    assert (table.column("n").to_pylist(), nxt, done, state) == ([1, 2, 3], 3, True, "FINISHED")
    assert model.connection["label"].startswith(f"replay of {path}")


def test_the_replay_clock_is_the_recordings_and_a_stopped_replay_ends_early(tmp_path):
    path, _ = record(tmp_path)
    recording = read(path)
    model = ClusterModel()
    replay = Replay(recording, model, speed=0.001).start()  # a thousand times slower: it stays at its start
    replay.stop()
    assert replay.wait(5) and replay.stopped_early
    assert model.clock() == pytest.approx(recording.header["started"], abs=0.01), "views read the recording's time"
    assert replay.job.fetch(0, 10)[2], "a stopped replay's job reads as ended"


def test_a_replay_before_any_rows_has_no_phantom_rows(tmp_path):
    path, _ = record(tmp_path)
    replay = Replay(read(path), ClusterModel())
    table, nxt, done, _ = replay.job.fetch(0, 10_000)
    assert (table.num_rows, nxt, done) == (0, 0, False)


def write(tmp_path, *lines: str) -> str:
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return str(path)


HEADER = json.dumps({"format": "flinkbench-recording", "version": 1, "job_id": JOB, "job_name": "clicks", "started": 1.0})


@pytest.mark.parametrize("lines, expected", [
    ([], "is empty"),
    (["{not json"], "line 1: not JSON"),
    (['{"format": "something-else"}'], "line 1: not a Flinkbench recording"),
    ([HEADER.replace('"version": 1', '"version": 9')], "line 1: format version 9 is newer"),
    ([HEADER.replace('"job_name"', '"name"')], "line 1: the header has no 'job_name'"),
    ([HEADER, '{"t": 0.5, "kind": "message", "message": {"type": "JobSubmitted"}}', "[1, 2]"],
     "line 3: a JSON object was expected, got list"),
    ([HEADER, '{"t": 2, "kind": "plan", "plan": {}}', '{"t": 1, "kind": "plan", "plan": {}}'],
     "line 3: 't' goes back in time"),
    ([HEADER, '{"t": "soon", "kind": "plan", "plan": {}}'], "line 2: 't' must be seconds since the start"),
    ([HEADER, '{"t": 1, "kind": "video"}'], "line 2: unknown kind 'video'"),
    ([HEADER, '{"t": 1, "kind": "message", "message": {}}'], "line 2: the message has no 'type'"),
    ([HEADER, '{"t": 1, "kind": "rows", "offset": 0, "arrow": "bm90IGFycm93"}'],
     "line 2: the rows are not base64 Arrow IPC"),
    ([HEADER, '{"t": 1, "kind": "end"}'], "line 2: an 'end' line needs the job's 'state'"),
])
def test_a_bad_recording_is_one_error_naming_the_line(tmp_path, lines, expected):
    path = write(tmp_path, *lines) if lines else str(tmp_path / "empty.jsonl")
    if not lines:
        (tmp_path / "empty.jsonl").write_text("")
    with pytest.raises(RecordingError) as err:
        read(path)
    assert str(err.value).startswith(path) and expected in str(err.value)


def test_a_good_line_after_the_header_reads_back(tmp_path):
    rows = table_to_b64(pa.table({"n": [7]}))
    recording = read(write(tmp_path, HEADER, json.dumps({"t": 0, "kind": "rows", "offset": 0, "arrow": rows})))
    assert recording.lines[0]["table"].column("n").to_pylist() == [7] and not recording.complete


def test_only_the_recorded_jobs_events_are_kept():
    tm_status = {"type": "TaskManagerStatusReported", "tm_id": "tm-a", "status": {"log": ["another job's line"]}}
    assert only_job(tm_status, JOB) is None, "TaskManagers' log lines are not the job's"
    freed = only_job(to_plain(events.SlotFreed("tm-a", 0, "a0", OTHER)), JOB)
    assert freed["job_id"] == ANOTHER_JOB
    assert only_job(to_plain(events.TaskManagerLost("tm-a", "gone")), JOB)["tm_id"] == "tm-a"
    assert only_job(to_plain(events.JobRestarting(OTHER, 1, "x", 0.0)), JOB) is None


def test_a_recording_that_cannot_start_raises_and_leaves_no_tap(tmp_path):
    model = ClusterModel()

    def unreachable() -> dict:
        raise OSError("connection refused")

    recorder = Recorder(tmp_path / "x.jsonl", RecordedJobClient(), "clicks", model, unreachable)
    with pytest.raises(OSError):
        recorder.start()
    assert not model._taps and recorder._file is None, "the file is closed and the model untouched"
    assert read(tmp_path / "x.jsonl").lines == [], "what was written is a header, still readable"
