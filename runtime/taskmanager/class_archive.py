"""The class-data archive that lets a TaskManager's Spark JVM start in less time and CPU.

A fresh Spark driver JVM loads, verifies and links tens of thousands of classes before its first query
answers. Java's class-data sharing (CDS) maps those classes, already parsed, from an archive file
instead (measured on two cores with -XX:+UseSerialGC: session up 5.3-6.1 s -> 3.3-4.1 s, first query
3.9-4.3 s -> 2.6-3.2 s, the JVM's CPU 15 s -> 10-12 s). Every TaskManager, failover and test cluster
starts JVMs, so these seconds add up.

One archive serves every Spark JVM of one Java and PySpark installation with the same JVM options; its
name holds a digest of those, so an upgrade starts a new one. It lives in the user's cache directory
(``taskmanager.spark.class-archive.dir``). Until it exists, JVMs start with ``-XX:+RecordDynamicDumpInfo``
and the first TaskManager that sits idle with a warmed session writes it from its own JVM (``jcmd
VM.cds dynamic_dump``, a few seconds' pause while nothing runs there); ``python -m
runtime.taskmanager.write_class_archive`` writes it at once (``make spark-archive`` does). A JVM that was told
to map the archive but did not (a changed installation) gets it removed, so that it is written again.
"""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib.util
import logging
import os
import shutil
import subprocess
import time
from importlib import metadata
from pathlib import Path

from runtime.config import Configuration

log = logging.getLogger(__name__)

DUMP_TIMEOUT_S = 180.0


def archive_path(conf: Configuration) -> Path | None:
    """Where this configuration's Spark JVMs find their archive; None when they use none (switched off,
    Spark Connect, or no Java to key it by)."""
    if not conf.get("taskmanager.spark.class-archive.enabled") or conf.get("spark.remote"):
        return None
    java = _java_binary()
    if java is None:
        return None
    folder = Path(conf.get("taskmanager.spark.class-archive.dir") or _cache_dir()).expanduser()
    stat, pyspark = java.stat(), _pyspark_version()
    identity = "\n".join([str(java), str(stat.st_size), str(stat.st_mtime_ns), pyspark, _pyspark_location(),
                          base_java_options(conf), *(f"{k}={v}" for k, v in sorted(_classpath_settings(conf).items()))])
    digest = hashlib.sha256(identity.encode()).hexdigest()[:16]
    return folder / f"spark-{pyspark}-{digest}.jsa"


def base_java_options(conf: Configuration) -> str:
    """``taskmanager.spark.jvm-options`` then ``spark.driver.extraJavaOptions`` (the JVM takes the last of
    clashing flags, so the user's own win)."""
    explicit = conf.spark_settings().get("spark.driver.extraJavaOptions", "")
    return " ".join(part for part in (conf.get("taskmanager.spark.jvm-options"), explicit) if part)


def driver_java_options(base: str, archive: Path | None) -> tuple[str, bool]:
    """The driver JVM's options for a launch now, and whether that JVM can write the archive later.

    A user's own ``-XX:SharedArchiveFile`` in ``base`` replaces ours: the JVM would map only one of them.
    """
    if archive is None or "-XX:SharedArchiveFile=" in base:
        return base, False
    if archive.exists():
        return f"-XX:SharedArchiveFile={archive} -Xlog:cds=off -Xlog:cds+dynamic=off {base}".strip(), False
    if _jcmd() is None:
        return base, False
    return f"-XX:+RecordDynamicDumpInfo -Xlog:cds=off -Xlog:cds+dynamic=off {base}".strip(), True


def is_mapped(jvm_pid: int, archive: Path) -> bool:
    """True when the process maps ``archive`` (Linux: its memory map names the file)."""
    try:
        return str(archive) in Path(f"/proc/{jvm_pid}/maps").read_text()
    except OSError:
        return True  # no /proc to ask: assume it did rather than throw a good archive away


def forget_unmapped(jvm_pid: int, archive: Path) -> None:
    """Remove an archive the JVM was told to map and did not (written by another installation, or
    damaged), so that the next JVM records what it needs and an idle TaskManager writes a fresh one."""
    if archive.exists() and not is_mapped(jvm_pid, archive):
        log.warning("the Spark JVM did not map the class archive %s; removing it to be written again", archive)
        with contextlib.suppress(OSError):
            archive.unlink()


def write(jvm_pid: int, archive: Path) -> bool:
    """Dump the classes the running JVM ``jvm_pid`` loaded into ``archive``; False if it exists already or
    another process is writing it. The JVM must have been started with -XX:+RecordDynamicDumpInfo."""
    jcmd = _jcmd()
    if jcmd is None or archive.exists():
        return False
    archive.parent.mkdir(parents=True, exist_ok=True)
    with open(archive.with_name(archive.name + ".lock"), "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False  # another TaskManager on this machine is writing it
        if archive.exists():
            return False
        partial = archive.with_name(f"{archive.name}.{os.getpid()}.partial")
        started = time.monotonic()
        try:
            done = subprocess.run([str(jcmd), str(jvm_pid), "VM.cds", "dynamic_dump", str(partial)],
                                  capture_output=True, text=True, timeout=DUMP_TIMEOUT_S)
            if done.returncode != 0 or not partial.exists() or partial.stat().st_size == 0:
                log.info("no Spark class archive written: %s", (done.stdout + done.stderr).strip()[-300:])
                return False
            os.replace(partial, archive)
        finally:
            with contextlib.suppress(OSError):
                partial.unlink()
    log.info("Spark class archive written to %s in %.1f s (Spark JVMs started from now on map it)",
             archive, time.monotonic() - started)
    return True


def _cache_dir() -> str:
    return os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache"), "flinkbench")


def _java_binary() -> Path | None:
    home = os.environ.get("JAVA_HOME")
    found = os.path.join(home, "bin", "java") if home else shutil.which("java")
    return Path(os.path.realpath(found)) if found and os.path.exists(found) else None


def _jcmd() -> Path | None:
    """jcmd beside the java that runs Spark (JDKs have it, bare JREs do not)."""
    java = _java_binary()
    candidate = java.with_name("jcmd") if java else None
    return candidate if candidate and candidate.exists() else None


def _pyspark_version() -> str:
    try:
        return metadata.version("pyspark")
    except metadata.PackageNotFoundError:
        return "unknown"


def _pyspark_location() -> str:
    """Where PySpark's jars are: an archive maps only for the class path it was written with, so two
    environments with the same PySpark release (two virtual environments on one machine) need one each,
    or each would find the other's archive unmappable and remove it."""
    spec = importlib.util.find_spec("pyspark")
    return str(Path(spec.origin).parent) if spec and spec.origin else "unknown"


def _classpath_settings(conf: Configuration) -> dict[str, str]:
    """Settings that change the driver's class path: an archive recorded with another one will not map."""
    return {k: v for k, v in conf.spark_settings().items()
            if k in ("spark.driver.extraClassPath", "spark.jars", "spark.jars.packages")}
