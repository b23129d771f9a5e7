"""High availability from the notebook: '%flink local --jobmanagers 2', '%flink kill jobmanager', and the
failover view naming the new leader while the job resumes from its checkpoint."""
from __future__ import annotations

import pytest

from tests.helpers.notebooks import code_notebook, error_of, execute, json_lines, text_of

pytestmark = pytest.mark.slow


def test_killing_the_leader_from_the_notebook_moves_leadership_and_the_job_resumes(tmp_path):
    nb = execute(code_notebook(
        "%load_ext kernel_magics\n%flink local --jobmanagers 2 --taskmanagers 1 --slots 1",
        "%%flink --name survivor --parallelism 1 --checkpoint-interval 1s\n"
        "env.datagen('seq BIGINT', rows_per_second=200, fields={'seq': {'kind': 'sequence'}}).blackhole()",
        "from kernel_magics import current_session\n"
        "from tests.helpers.clusters import wait_until\n"
        "from tests.helpers.live_checks import report, same_moment\n"
        "session = current_session()\n"
        "view = list(session.jobs.values())[-1]\n"
        "client = session.client\n"
        "completed = lambda: client.get(f'/jobs/{view.job_id}/checkpoints')['counts']['completed']\n"
        "wait_until(lambda: completed() >= 2, 180, 'checkpoints before the kill')\n"
        "leader = lambda: (client.get('/jobmanagers')['leader'] or {}).get('url')\n"
        "view_leader = lambda: [r for r, role in zip(view.views.sources['jobmanagers'].data['url'],\n"
        "                       view.views.sources['jobmanagers'].data['role']) if role == 'leader']\n"
        "first = leader()\n"
        "shown_first, _ = same_moment(lambda: view_leader(), lambda: [first], 'leader before the kill')\n"
        "report(first=first, view_first=shown_first)",
        "%flink kill jobmanager",
        "wait_until(lambda: leader() not in (None, first), 120, 'a standby takes over')\n"
        "second = leader()\n"
        "state = lambda: client.get(f'/jobs/{view.job_id}')['state']\n"
        "restored = lambda: client.get(f'/jobs/{view.job_id}/checkpoints')['latest']['restored']\n"
        "wait_until(lambda: state() == 'RUNNING' and restored() is not None, 180, 'the job resumed')\n"
        "shown, _ = same_moment(lambda: view_leader(), lambda: [second], 'leader after the kill')\n"
        "report(second=second, view_leader=shown, restored=restored()['id'], state=state())",
        "%flink cancel {view.job_id}\n%flink stop",
    ), timeout=400, save_to=tmp_path / "failover.ipynb")
    (start, _submit, before, kill, after, stop) = nb.cells
    assert all(error_of(c) is None for c in nb.cells), [text_of(c) for c in nb.cells if error_of(c)]
    first, result = json_lines(before)["first"], json_lines(after)
    assert json_lines(before)["view_first"] == [first], "the failover view names the leader"
    assert result["second"] != first and result["view_leader"] == [result["second"]]
    assert result["state"] == "RUNNING" and result["restored"] >= 1
    assert "killed" in text_of(kill).lower(), text_of(kill)
