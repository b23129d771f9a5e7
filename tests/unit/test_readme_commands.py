"""Every command the README shows is run by a test that reads it from the README, or listed with why it is not
(tests/helpers/readme_inventory.py): a command added to the README that no test runs fails here."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import readme
from tests.helpers.readme_inventory import INVENTORY, Elsewhere, NotRun, Run

REPO = Path(__file__).resolve().parents[2]


def test_every_command_the_readme_shows_is_run_or_said_why_not():
    unlisted = [c for c in readme.commands() if c not in INVENTORY]
    assert not unlisted, ("the README shows commands no test runs: run each from the README in a test, or list it "
                          f"in tests/helpers/readme_inventory.py with why it cannot run here: {unlisted}")


def test_the_inventory_lists_only_what_the_readme_shows():
    shown = set(readme.commands())
    stale = [c for c in INVENTORY if c not in shown]
    assert not stale, f"listed but no longer in the README: {stale}"


@pytest.mark.parametrize("command, how", list(INVENTORY.items()))
def test_each_runner_exists_and_reads_the_readme(command, how):
    if isinstance(how, NotRun):
        assert len(how.reason) > 20, f"{command!r}: say why it cannot run here"
        return
    source = (REPO / how.test).read_text()
    if isinstance(how, Run):
        assert "readme" in source, f"{how.test} runs {command!r} but does not read it from the README"
    else:
        assert isinstance(how, Elsewhere) and how.how, command


@pytest.mark.parametrize("synopsis, argv, expected", [
    ("flinkbench list [-r | -a]", ["flinkbench", "list"], True),
    ("flinkbench list [-r | -a]", ["flinkbench", "list", "-a", "-m", "h:1", "--token-file", "t"], True),
    ("flinkbench list [-r | -a]", ["flinkbench", "list", "-r", "-a"], False),
    ("flinkbench savepoint JOB [DIR]  |  flinkbench savepoint --dispose PATH", ["flinkbench", "savepoint", "j"], True),
    ("flinkbench savepoint JOB [DIR]  |  flinkbench savepoint --dispose PATH",
     ["flinkbench", "savepoint", "--dispose", "/p"], True),
    ("flinkbench run [-p N] [-D key=value ...] [-s SAVEPOINT] [--detached] job.py [args]",
     ["flinkbench", "run", "-D", "a.b=1 s", "-D", "c=2", "--detached", "job.py", "x"], True),
    ("flinkbench run [-p N] [-D key=value ...] [-s SAVEPOINT] [--detached] job.py [args]",
     ["flinkbench", "run", "--detached", "-p", "2", "job.py"], False),
    ("flinkbench stop [--drain] [-p DIR] JOB", ["flinkbench", "stop", "--drain", "JOB"], True),
    ("flinkbench cancel JOB", ["flinkbench", "cancel"], False),
])
def test_a_command_line_is_an_instance_of_the_synopsis_as_written(synopsis, argv, expected):
    assert readme.matches(synopsis, argv) is expected
