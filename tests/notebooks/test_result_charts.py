"""`%%flink --chart line` over a windowed count, executed headless: the chart follows the collected rows
and a window that fires again (allowed lateness) moves its point instead of adding a second one."""
from __future__ import annotations

import pytest

from tests.helpers.notebooks import code_notebook, error_of, execute, json_lines, text_of

pytestmark = pytest.mark.slow

BASE = 1_700_000_000  # a multiple of 10 s: windows [0, 10), [10, 20), [20, 30) from here
CHART_CELL = f"""%%flink --name chart-refire --parallelism 1 --wait --chart line --x window_start --y n
import datetime as dt
seconds = [1, 5, 12, 3, 25]  # 3 arrives after 12 moved the watermark past [0, 10): within the lateness, it re-fires
rows = [{{"k": "a", "ts": dt.datetime.fromtimestamp({BASE} + s, dt.timezone.utc)}} for s in seconds]
(env.from_collection(rows, bundle_rows=1)
    .assign_timestamps_and_watermarks(WatermarkStrategy.for_bounded_out_of_orderness("2 s").with_timestamp_column("ts"))
    .key_by("k").window(TumblingEventTimeWindows.of("10 s")).allowed_lateness("5 s")
    .aggregate(n=agg.count()).collect())
"""
READ_CELL = """from kernel_magics.session import session_for
from tests.helpers.live_checks import report
view = session_for(get_ipython()).jobs[last_job.job_id]
xs, ys = view.chart.points.series()["n"]
rows = [(int(r["window_start"].timestamp()), r["n"]) for r in last_job.results(timeout=60).to_pylist()]
report(xs=xs, ys=ys, drawn=view.chart.source.data["ys"], rows=rows, rows_seen=view.chart.points.rows_seen,
       figure=view.chart.figure is not None)
"""


def test_line_chart_of_a_windowed_count_moves_a_refired_windows_point(cluster, tmp_path):
    nb = execute(code_notebook(
        f"%load_ext kernel_magics\n%flink connect {cluster.url} --token-file {cluster.token_file}",
        CHART_CELL, READ_CELL), timeout=300, save_to=tmp_path / "chart.ipynb")
    assert all(error_of(c) is None for c in nb.cells), [text_of(c) for c in nb.cells if error_of(c)]
    seen = json_lines(nb.cells[2])
    assert sorted(tuple(r) for r in seen["rows"]) == [(BASE, 2), (BASE, 3), (BASE + 10, 1), (BASE + 20, 1)], \
        "the job emitted window [0, 10) twice: once on time, once more with the late row"
    assert seen["rows_seen"] == 4 and seen["figure"]
    assert seen["xs"] == [BASE * 1000, (BASE + 10) * 1000, (BASE + 20) * 1000], "one point per window"
    assert seen["ys"] == [3, 1, 1], "the re-fired window's point holds its new count"
    assert seen["drawn"] == [[3, 1, 1]], "and that is what the line draws"
