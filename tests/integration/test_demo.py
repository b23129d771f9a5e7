"""``make demo``, the README's first command, run as a newcomer runs it: its exit code and its closing line.

The demo once failed on every fresh clone for weeks (its reference answer had moved into the tests' helpers
and the failure was silenced) while the suite stayed green; these tests keep it from breaking unnoticed.
"""
from __future__ import annotations

import os
import re
import signal
import subprocess
from pathlib import Path

import pytest

from runtime.demo import Reference
from runtime.errors import FlinkbenchError
from tests.helpers.readme import command_lines

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.serial  # it kills a TaskManager at a moment paced by its input: alone, as a user runs it
def test_make_demo_as_the_readme_shows_it_ends_exact():
    assert "make demo" in command_lines("From a clone"), "the README no longer shows `make demo`"
    stdout, stderr, code = run_in_own_group(["make", "demo"], timeout=420)
    lines = [line for line in stdout.splitlines() if line.strip()]
    said = "\n".join(lines[-25:]) + "\n" + stderr[-2000:]
    assert code == 0, f"make demo exited {code}:\n{said}"
    assert re.match(r"\[\s*[\d.]+ s\] exact: ", lines[-1]), f"the demo's last line is not 'exact: ...':\n{said}"
    assert any("killing TaskManager" in line for line in lines), said
    assert any("restores its state from checkpoint" in line for line in lines), said


def run_in_own_group(argv: list[str], timeout: float) -> tuple[str, str, int | None]:
    """Run ``argv`` in the repository as a process group of its own; past ``timeout`` the whole group (make, the
    demo, its cluster and JVMs) is killed, so an overrun leaves nothing behind. Returns stdout, stderr, exit code."""
    process = subprocess.Popen(argv, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env=as_a_user_shell(), start_new_session=True)
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        stdout, stderr = process.communicate()
        stderr += f"\n(killed after {timeout:.0f} s)"
    return stdout, stderr, process.returncode


def as_a_user_shell() -> dict[str, str]:
    """The environment of a user's shell: without the variables an enclosing ``make test`` exports, which would
    make the inner make print "Entering/Leaving directory" around the demo's output."""
    inherited_from_make = {"MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES"}
    return {name: value for name, value in os.environ.items() if name not in inherited_from_make}


def test_a_failing_reference_says_why(tmp_path, monkeypatch):
    """The reference runs in a process of its own; when it fails, its own last words reach the user."""
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "no-java-here"))
    reference = Reference(str(tmp_path))
    try:
        with pytest.raises(FlinkbenchError) as failure:
            reference.rows()
    finally:
        reference.stop()
    message = str(failure.value)
    assert "reference answer" in message and "exit code" in message, message
    assert "no-java-here" in message or "JAVA" in message, message
