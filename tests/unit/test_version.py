"""One version number: package.json's, read by the runtime and given to the Python distribution."""
from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import runtime
from runtime.version import version

REPO = Path(__file__).resolve().parents[2]


def package_json_version() -> str:
    return json.loads((REPO / "package.json").read_text())["version"]


def test_the_runtime_reports_package_json_version():
    assert version() == package_json_version()
    assert runtime.__version__ == package_json_version()


def test_pyproject_takes_its_version_from_package_json():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert "version" not in project["project"]
    assert "version" in project["project"]["dynamic"]
    assert project["tool"]["hatch"]["version"]["source"] == "nodejs"


def test_no_other_tracked_file_spells_the_version_out():
    literal = re.escape(package_json_version())
    found = subprocess.run(["git", "grep", "-l", "-E", f"(version|VERSION).{{0,6}}[\"']{literal}[\"']", "--",
                            "*.py", "*.toml", "*.ts", "*.cfg"], cwd=REPO, capture_output=True, text=True).stdout
    assert found.split() == []


def test_the_cli_answers_version():
    out = subprocess.run([sys.executable, "-m", "runtime.cli", "--version"], cwd=REPO, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f"flinkbench {package_json_version()}"
