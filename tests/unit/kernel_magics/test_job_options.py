"""The job options of %%flink and %%flink sql: both magics parse them, and they land on the environment."""
from __future__ import annotations

import pytest
from IPython.core.magic_arguments import parse_argstring

from kernel_magics.commands.sql import cell_overrides, sql
from kernel_magics.errors import FlinkError
from kernel_magics.job_options import apply_job_options
from kernel_magics.magics import cell_options
from runtime.api.environment import StreamExecutionEnvironment

LINE = "--parallelism 3 --checkpoint-interval 5s --mode batch --from-savepoint /tmp/sp-1"


@pytest.mark.parametrize("magic", [cell_options, sql], ids=["%%flink", "%%flink sql"])
def test_both_magics_take_the_job_options(magic):
    args = parse_argstring(magic, LINE)
    assert (args.parallelism, args.checkpoint_interval, args.mode, args.from_savepoint) == (3, "5s", "batch", "/tmp/sp-1")


def test_the_options_set_the_environment():
    env = apply_job_options(StreamExecutionEnvironment(), parse_argstring(cell_options, LINE), "%%flink")
    assert env.config["parallelism.default"] == "3"
    assert env.config["execution.runtime-mode"] == "batch"
    assert env.config["execution.checkpointing.interval"] == "5 s"
    assert env.restore_from == "/tmp/sp-1"


def test_a_sql_cell_overrides_only_what_its_line_sets():
    assert cell_overrides(parse_argstring(sql, "--parallelism 2")) == {"parallelism.default": "2"}


@pytest.mark.parametrize("line, named", [
    ("--checkpoint-interval 0s", "checkpoint interval must be positive"),
    ("--checkpoint-interval soon", "checkpoint interval: expected a duration such as '10 s' or '500 ms', got 'soon'"),
    ("--parallelism 0", "config key 'parallelism.default': expected a value >= 1, got 0")])
def test_a_bad_option_is_an_error_naming_the_magic_and_the_value(line, named):
    with pytest.raises(FlinkError) as err:
        apply_job_options(StreamExecutionEnvironment(), parse_argstring(cell_options, line), "%%flink sql")
    assert str(err.value).startswith("%%flink sql options: ") and named in str(err.value)
