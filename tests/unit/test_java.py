"""The Java check that runs before anything starts Spark: what it finds and the one line it says."""
from __future__ import annotations

import os
import stat

import pytest

from runtime.java import JavaMissing, check_java, major_version


def fake_java(directory, version_line: str) -> str:
    """A stand-in ``java`` that prints ``version_line`` on stderr as ``java -version`` does."""
    path = directory / "java"
    path.write_text(f"#!/bin/sh\necho '{version_line}' >&2\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


@pytest.mark.parametrize("output, major", [
    ('openjdk version "17.0.15" 2025-04-15', 17),
    ('openjdk version "21" 2023-09-19', 21),
    ('java version "1.8.0_292"', 8),
    ('openjdk version "11.0.2" 2019-01-15', 11),
    ("no version here", None),
])
def test_major_version_reads_java_version_output(output, major):
    assert major_version(output) == major


def test_no_java_on_path_is_one_line_naming_java_17_and_what_to_install(tmp_path):
    with pytest.raises(JavaMissing) as err:
        check_java({"PATH": str(tmp_path)})
    message = str(err.value)
    assert "\n" not in message
    assert "Java 17+" in message and "no java on PATH" in message and "openjdk-17-jre-headless" in message


def test_an_old_java_is_refused_with_its_version(tmp_path):
    fake_java(tmp_path, 'openjdk version "11.0.2" 2019-01-15')
    with pytest.raises(JavaMissing, match=r"is Java 11"):
        check_java({"PATH": str(tmp_path)})


def test_java_home_wins_over_path_as_in_pyspark(tmp_path):
    (tmp_path / "path").mkdir()
    fake_java(tmp_path / "path", 'openjdk version "17.0.1"')
    (tmp_path / "home" / "bin").mkdir(parents=True)
    with pytest.raises(JavaMissing, match=r"JAVA_HOME=.* has no bin/java"):
        check_java({"PATH": str(tmp_path / "path"), "JAVA_HOME": str(tmp_path / "home")})
    java = fake_java(tmp_path / "home" / "bin", 'openjdk version "21.0.3"')
    assert check_java({"PATH": str(tmp_path / "path"), "JAVA_HOME": str(tmp_path / "home")}) == java


def test_a_new_enough_java_on_path_passes(tmp_path):
    java = fake_java(tmp_path, 'openjdk version "17.0.15" 2025-04-15')
    assert check_java({"PATH": str(tmp_path) + os.pathsep + "/nonexistent"}) == java
