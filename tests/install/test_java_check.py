"""On a machine without Java, `make demo` stops at once with one line naming Java 17 and what to install."""
from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
WITHHELD = {"java", "apt-get"}  # no Java, and no way to install it here (as on a non-Debian machine)


def path_without_java(bin_dir: Path) -> str:
    """A PATH of one folder linking every program on today's PATH except java (and apt-get)."""
    bin_dir.mkdir()
    for folder in os.environ["PATH"].split(os.pathsep):
        if not os.path.isdir(folder):
            continue
        for name in os.listdir(folder):
            target = os.path.join(folder, name)
            if name in WITHHELD or (bin_dir / name).exists() or not os.access(target, os.X_OK):
                continue
            (bin_dir / name).symlink_to(target)
    return str(bin_dir)


def test_make_demo_without_java_says_so_in_one_line_within_seconds(tmp_path):
    path = path_without_java(tmp_path / "bin")
    assert shutil.which("java", path=path) is None and shutil.which("make", path=path)
    env = {k: v for k, v in os.environ.items() if k not in ("JAVA_HOME", "MAKEFLAGS", "MAKELEVEL")}
    env["PATH"] = path
    started = time.monotonic()
    result = subprocess.run(["make", "--no-print-directory", "-C", str(REPO), "demo", "PYTHON=python3"],
                            env=env, capture_output=True, text=True, timeout=60)
    took = time.monotonic() - started
    assert result.returncode != 0
    ours = [line for line in result.stderr.splitlines() if not line.startswith("make: ***")]
    assert len(ours) == 1, result.stderr
    assert ours[0].startswith("flinkbench: Java 17+ is needed") and "openjdk-17-jre-headless" in ours[0]
    assert result.stdout == ""
    assert took < 10, f"took {took:.1f} s"
