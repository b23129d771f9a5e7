"""make bench's options: bad ones are one clear line naming them; the latency loads come from our measured capacity."""
from __future__ import annotations

import pytest

from tests.benchmarks import bench_parts
from tests.benchmarks.run_all import parse_args
from tests.unit.benchmarks.sample_figures import figures


def test_options_parse_and_bad_ones_are_named(capsys):
    opts = parse_args(["--sizes", "2e6,20000000", "--parts", "sweep,latency", "--triggers", "default, 1 second"])
    assert opts.sizes == [2_000_000, 20_000_000] and opts.parts == ["sweep", "latency"]
    assert opts.triggers == ["default", "1 second"] and opts.latency_checkpoints is True
    for argv, named in ((["--parts", "sweep,speed"], "unknown parts ['speed']"),
                        (["--sizes", "two"], "--sizes: comma-separated numbers expected"),
                        (["--rounds", "0"], "--rounds must be at least 1")):
        with pytest.raises(SystemExit):
            parse_args(argv)
        assert named in capsys.readouterr().err


def test_capacity_is_our_median_round_then_the_sweeps_best_then_the_option():
    opts = parse_args([])
    assert bench_parts.capacity(figures(ours_rounds=(5e6, 4e6, 4.5e6)), opts) == 4.5e6
    no_rounds = {k: v for k, v in figures().items() if k != "rounds"}
    assert bench_parts.capacity(no_rounds, opts) == 4.2e6, "the sweep's best run of ours"
    assert bench_parts.capacity({}, parse_args(["--capacity", "1e6"])) == 1e6
    with pytest.raises(SystemExit, match="give --capacity"):
        bench_parts.capacity({}, opts)
