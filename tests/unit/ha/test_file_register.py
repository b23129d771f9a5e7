"""The compare-and-set register of file HA: one writer per version, readers see the newest, old versions go."""
from __future__ import annotations

import os
import time

import pytest

from runtime.ha import file_register
from runtime.ha.file_register import KEEP_VERSIONS, FileRegister


def test_an_empty_register_reads_as_version_0(tmp_path):
    assert FileRegister(str(tmp_path / "state")).read() == (0, {})


def test_of_two_writers_that_read_the_same_version_exactly_one_writes_the_next(tmp_path):
    a, b = FileRegister(str(tmp_path)), FileRegister(str(tmp_path))
    version, _ = a.read()
    assert a.compare_and_set(version, {"by": "a"})
    assert not b.compare_and_set(version, {"by": "b"}), "b decided on a version that is no longer the newest"
    assert b.read() == (1, {"by": "a"})
    assert b.compare_and_set(1, {"by": "b"}) and a.read() == (2, {"by": "b"})
    assert not [n for n in os.listdir(tmp_path) if n.endswith(".tmp")], "no temporary file is left"


def test_old_versions_and_stale_temporary_files_go(tmp_path):
    register = FileRegister(str(tmp_path))
    stale = tmp_path / ".4242.dead.tmp"  # a writer killed between writing and linking
    stale.write_text("{}")
    os.utime(stale, (time.time() - 3600, time.time() - 3600))
    for n in range(KEEP_VERSIONS + 5):
        assert register.compare_and_set(n, {"n": n + 1})
    assert sorted(os.listdir(tmp_path)) == [f"{v:012d}.json" for v in range(6, KEEP_VERSIONS + 6)]
    assert register.read() == (KEEP_VERSIONS + 5, {"n": KEEP_VERSIONS + 5})


def test_a_reader_whose_version_was_removed_meanwhile_lists_again(tmp_path, monkeypatch):
    register = FileRegister(str(tmp_path))
    register.compare_and_set(0, {"n": 1})
    register.compare_and_set(1, {"n": 2})
    listed = iter([1, 2])  # the first listing is from before version 1 went
    monkeypatch.setattr(FileRegister, "newest", lambda self: next(listed))
    os.remove(tmp_path / f"{1:012d}.json")
    assert register.read() == (2, {"n": 2})


def test_a_register_whose_versions_keep_vanishing_says_so(tmp_path, monkeypatch):
    register = FileRegister(str(tmp_path))
    monkeypatch.setattr(FileRegister, "newest", lambda self: 7)
    with pytest.raises(OSError, match="kept vanishing"):
        register.read()
    assert file_register.READ_ATTEMPTS > 1
