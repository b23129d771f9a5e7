"""The report of a benchmark run: its tables from the figures alone, its plots drawn into files, and a file that
holds no run refused with a clear error."""
from __future__ import annotations

import json

import pytest

from tests.benchmarks import report
from tests.unit.benchmarks.sample_figures import figures


def test_the_report_holds_the_targets_rounds_latency_and_starts():
    text = report.markdown(figures(), {"throughput": "throughput-rounds.png", "latency": "latency.png"})
    assert "| latency at 20% load | median < 1.3 s, max < 1.5 s | median 1.25 s, max 1.6 s, 6 of 6 windows | " \
           "**missed** | max +0.10 s |" in text
    assert "| 2 | 4,000,000 | 3,500,000 | 1.14 | " in text, "round 2 of the rounds table"
    assert "| min / median / max |  |  | 1.14 / 1.5 / 1.67 |" in text
    assert "![throughput](throughput-rounds.png)" in text and "![latency](latency.png)" in text
    assert "![sweep]" not in text, "only the plots that were drawn"
    assert "| 20% | 900,000 | 10,000 | 1.25 / 1.6 s (6 of 6) | 2.5 / 3 s (6 of 6) | 1.1 / 1.3 s (6 of 6) |" in text
    assert "| Flinkbench, first result, class archive | 7.1 | 7.75 | 8.4 | 2 |" in text
    assert "- Structured Streaming, 20 M, flinkbench-jvm: TimeoutError" in text, "a failed run is listed"
    assert "not results" not in text


def test_a_loaded_machine_is_said_to_be_one():
    text = report.markdown(figures(others=0.4), {})
    assert "**Measured on a loaded machine**" in text and "these figures are not results" in text
    loaded_latency = figures()
    loaded_latency["latency"]["flinkbench"][1]["others_share"] = 0.3
    assert "(others above 10% of the cores in 1 of " in report.markdown(loaded_latency, {}), "a latency run counts"


def test_the_command_writes_the_report_and_its_plots_beside_the_json(tmp_path):
    source = tmp_path / "bench.json"
    source.write_text(json.dumps(figures()))
    assert report.main([str(source)]) == 0
    text = (tmp_path / "report.md").read_text()
    for plot in ("throughput-rounds.png", "sweep.png", "latency.png", "starts-memory.png"):
        assert f"]({plot})" in text
        assert (tmp_path / plot).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", plot


def test_a_file_that_is_not_a_run_is_one_clear_error(tmp_path, capsys):
    source = tmp_path / "bench.json"
    source.write_text("[1, 2]")
    with pytest.raises(SystemExit) as exited:
        report.main([str(source)])
    assert exited.value.code == 2
    assert "is not the JSON of a benchmark run" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        report.main([str(tmp_path / "missing.json")])
    assert "No such file" in capsys.readouterr().err
