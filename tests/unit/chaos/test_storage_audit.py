"""The storage trace's verdict: operations after a lost leadership or a superseded attempt are violations,
refused ones and late uploads written aside are figures."""
from __future__ import annotations

import json

from tests.chaos.storage_audit import audit, read_trace, session_ends

JM = {"role": "jobmanager", "session": "s1"}


def op(t, url, token, refused=None, op="delete"):
    return {"kind": "storage", "t": t, "pid": 1, "op": op, "url": url, "token": token, "refused": refused}


def leading(t, session):
    return {"kind": "leading", "t": t, "pid": 2, "session": session}


def test_a_session_ends_when_the_next_one_begins():
    assert session_ends([leading(1, "s1"), leading(5, "s1"), leading(9, "s2")]) == {"s1": 9, "s2": float("inf")}


def test_a_deposed_leaders_discard_is_a_violation_and_its_refused_one_a_figure():
    records = [leading(1, "s1"), op(2, "/ck/chk-3", JM), leading(10, "s2"),
               op(11, "/ck/chk-4", JM, refused="no confirmed lease"), op(12, "/ck/chk-5", JM)]
    result = audit(records)
    assert (result.operations, result.refused, result.by_deposed_leaders) == (2, 1, 1) and not result.ok
    assert "chk-5" in result.examples[0]


def test_a_superseded_attempts_late_upload_is_fine_aside_and_a_violation_elsewhere():
    tm = {"role": "taskmanager", "attempt": "a1", "checkpoint": 4, "session": "s1"}
    records = [leading(1, "s1"), op(2, "/ck/chk-4/v-0-a1/state.json", tm, op="write"),
               {"kind": "superseded", "t": 3, "pid": 2, "attempts": ["a1"]},
               op(4, "/ck/chk-4/v-0-a1/op.arrow", tm, op="write"), op(5, "/ck/chk-4/v-0/state.json", tm, op="write")]
    result = audit(records)
    assert (result.late_aside, result.by_superseded_attempts, result.violations) == (1, 1, 1)


def test_an_operation_without_a_fence_is_a_violation():
    assert audit([op(1, "/ha/jobs/j/push/epoch", None, op="write")]).unfenced == 1


def test_a_trace_cut_short_by_a_killed_process_is_read_without_its_last_line(tmp_path):
    path = tmp_path / "trace.jsonl"
    path.write_text(json.dumps(leading(1, "s1")) + "\n" + '{"kind": "stor')
    assert read_trace(str(path)) == [leading(1, "s1")]
