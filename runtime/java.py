"""Is there a Java that PySpark can run on? Asked before anything starts a Spark session.

Every TaskManager's Spark session is a JVM, and PySpark 4 needs Java 17 or newer. Without one, Spark
fails deep inside a TaskManager's log; this check says it up front, in one line, with what to install.
PySpark runs ``$JAVA_HOME/bin/java`` when JAVA_HOME is set, else the ``java`` on PATH: so does this.

``python -m runtime.java`` runs the check (``make demo`` and ``make test`` do, before anything else):
exit 0 and nothing printed when Java is fine, else the one line on stderr and exit 1. It needs
nothing outside the standard library, so it runs before the project's dependencies are installed.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping

from runtime.errors import ClusterError

MIN_MAJOR = 17
INSTALL_HINT = ("install Java 17 or newer (Debian/Ubuntu: apt-get install openjdk-17-jre-headless, "
                "or run scripts/install-system-deps.sh as root) or point JAVA_HOME at one")
_VERSION_RE = re.compile(r'version "(\d+)(?:\.(\d+))?[^"]*"')


class JavaMissing(ClusterError):
    """No usable Java 17+ here; the message is one line that says what was found and what to install."""


def major_version(version_output: str) -> int | None:
    """The major version from ``java -version`` output ('version "17.0.15"' -> 17, '"1.8.0_292"' -> 8)."""
    match = _VERSION_RE.search(version_output)
    if not match:
        return None
    major = int(match.group(1))
    return int(match.group(2) or 0) if major == 1 else major


def java_executable(environ: Mapping[str, str]) -> str | None:
    """The java PySpark would run: $JAVA_HOME/bin/java when JAVA_HOME is set, else ``java`` on PATH."""
    home = environ.get("JAVA_HOME")
    if home:
        candidate = os.path.join(home, "bin", "java")
        return candidate if os.access(candidate, os.X_OK) else None
    return shutil.which("java", path=environ.get("PATH", os.defpath))


def check_java(environ: Mapping[str, str] | None = None, timeout: float = 20.0) -> str:
    """The path of a Java >= 17, or JavaMissing naming what is wrong and what to install."""
    environ = os.environ if environ is None else environ
    java = java_executable(environ)
    if java is None:
        where = f"JAVA_HOME={environ['JAVA_HOME']} has no bin/java" if environ.get("JAVA_HOME") else "no java on PATH"
        raise JavaMissing(f"Java {MIN_MAJOR}+ is needed to run PySpark, but {where}: {INSTALL_HINT}")
    try:
        out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=timeout,
                             env=dict(environ)).stderr
    except (OSError, subprocess.TimeoutExpired) as err:
        raise JavaMissing(f"Java {MIN_MAJOR}+ is needed to run PySpark, but {java} -version failed ({err}): "
                          f"{INSTALL_HINT}") from None
    major = major_version(out)
    if major is None or major < MIN_MAJOR:
        found = f"Java {major}" if major else "a java whose version cannot be read"
        raise JavaMissing(f"Java {MIN_MAJOR}+ is needed to run PySpark, but {java} is {found}: {INSTALL_HINT}")
    return java


def main() -> int:
    try:
        check_java()
    except JavaMissing as err:
        print(f"flinkbench: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
