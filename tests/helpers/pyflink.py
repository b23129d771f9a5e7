"""Apache Flink's own tools (``bin/flink``, ``bin/sql-client.sh``, PyFlink) for tests that check
compatibility against the real thing.

``apache-flink`` pins ``pyarrow < 17``, so it cannot share the project's environment: it lives in a
virtual environment of its own under ``~/.cache/flinkbench/`` (``FLINKBENCH_CACHE`` moves it), made
once and reused by every later run. Nothing is skipped: when the install fails, the test fails with
pip's output. Java 17+ must be on the PATH (``scripts/install-system-deps.sh`` installs it).
"""
from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
import venv
from dataclasses import dataclass
from pathlib import Path

FLINK_VERSION = "2.3.0"
INSTALL_TIMEOUT_S = 1800


def cache_root() -> Path:
    return Path(os.environ.get("FLINKBENCH_CACHE") or Path.home() / ".cache" / "flinkbench")


@dataclass(frozen=True)
class PyFlink:
    """An installed apache-flink: its interpreter and ``FLINK_HOME`` (the wheel's ``pyflink/`` folder)."""
    python: Path
    flink_home: Path

    @property
    def flink(self) -> Path:
        return self.flink_home / "bin" / "flink"

    def env(self, **extra: str) -> dict[str, str]:
        """The environment Flink's scripts need: FLINK_HOME, the venv first on PATH, Java found."""
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PYSPARK_", "SPARK_", "PYTHONPATH"))}
        env["FLINK_HOME"] = str(self.flink_home)
        env["PATH"] = f"{self.python.parent}{os.pathsep}{env.get('PATH', '')}"
        env.setdefault("FLINK_CONF_DIR", str(self.flink_home / "conf"))
        env.update(extra)
        return env

    def run_cli(self, args: list[str], jobmanager: str, token: str | None = None,
                timeout: float = 180.0) -> subprocess.CompletedProcess:
        """``bin/flink ARGS -m host:port`` with the token as Flink's client sends extra headers
        (``FLINK_REST_CLIENT_HEADERS``: one ``Name:value`` per line, no space after the colon)."""
        address = jobmanager.split("://", 1)[-1].rstrip("/")
        action, rest = args[0], list(args[1:])
        extra = {"FLINK_REST_CLIENT_HEADERS": f"Authorization:Bearer {token}"} if token else {}
        return subprocess.run([str(self.flink), action, "-m", address, *rest], env=self.env(**extra),
                              capture_output=True, text=True, timeout=timeout, check=False)


def pyflink(version: str = FLINK_VERSION) -> PyFlink:
    """The cached apache-flink installation, installing it first when it is missing (under a lock, so
    that parallel test runs install it once)."""
    home = cache_root() / f"pyflink-{version}"
    home.parent.mkdir(parents=True, exist_ok=True)
    with open(home.parent / f"pyflink-{version}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        marker = home / ".installed"
        if not marker.exists():
            _install(home, version)
            marker.write_text(version)
    python = home / "bin" / "python"
    flink_home = Path(subprocess.run(
        [str(python), "-c", "import os, pyflink; print(os.path.dirname(pyflink.__file__))"],
        capture_output=True, text=True, check=True).stdout.strip())
    if not (flink_home / "bin" / "flink").exists():
        raise RuntimeError(f"apache-flink {version} in {home} has no bin/flink under {flink_home}")
    if shutil.which("java") is None:
        raise RuntimeError("Flink's CLI needs Java 17+ on the PATH (scripts/install-system-deps.sh installs it)")
    return PyFlink(python, flink_home)


def _install(home: Path, version: str) -> None:
    if home.exists():
        shutil.rmtree(home)  # a half-made environment from an interrupted install
    venv.EnvBuilder(with_pip=True, clear=True).create(home)
    pip = [str(home / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    done = subprocess.run([*pip, f"apache-flink=={version}"], capture_output=True, text=True,
                          timeout=INSTALL_TIMEOUT_S, check=False)
    if done.returncode != 0:
        shutil.rmtree(home, ignore_errors=True)
        raise RuntimeError(f"pip could not install apache-flink=={version} into {home} "
                           f"(python {sys.version.split()[0]}):\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")


if __name__ == "__main__":  # python -m tests.helpers.pyflink: install now, print where
    found = pyflink()
    print(f"python {found.python}\nFLINK_HOME {found.flink_home}")
