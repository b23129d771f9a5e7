"""A real PostgreSQL server for tests, started as the ZooKeeper tests start ZooKeeper: ``initdb`` into a fresh
temporary folder, ``pg_ctl`` on a free 127.0.0.1 port with ``wal_level=logical`` (change data capture needs a
logical replication slot), stopped and removed afterwards.

Debian's ``postgresql`` package provides the binaries (``scripts/install-system-deps.sh postgresql`` installs it
when root). PostgreSQL refuses to run as root, so as root the server runs as the ``postgres`` user that package
creates, with its folder directly under the temporary directory (pytest's own are readable by root only).
Clients connect over TCP with a password (``scram-sha-256``), so a wrong password is refused as on a real server.
"""
from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from tests.helpers.ports import free_port

BIN = Path("/usr/lib/postgresql/15/bin")
JDBC_JAR = Path("/usr/share/java/postgresql.jar")
USER, PASSWORD, DATABASE = "flinkbench", "flinkbench-secret", "shop"


def jdbc_driver_config() -> dict[str, str]:
    """The cluster setting that puts the JDBC driver in the TaskManagers' Spark sessions (for the jdbc scan), when
    the driver is installed; :func:`require_postgres` fails loudly where it is not."""
    return {"spark.jars": str(JDBC_JAR)} if JDBC_JAR.exists() else {}


def _as_server_user(argv: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *argv] if os.geteuid() == 0 else argv


def require_postgres() -> None:
    """Fail loudly, naming what to install, when the server's binaries or the JDBC driver are missing."""
    missing = [str(p) for p in (BIN / "initdb", BIN / "pg_ctl", JDBC_JAR) if not p.exists()]
    assert not missing, (f"PostgreSQL for the tests is missing ({', '.join(missing)}): run "
                         "`bash scripts/install-system-deps.sh postgresql` as root (Debian packages postgresql, "
                         "postgresql-15-wal2json, libpostgresql-jdbc-java)")


@dataclass
class PostgresServer:
    """A running server: where it listens and how to reach it (psycopg's conninfo, a JDBC URL)."""
    directory: Path
    port: int
    host: str = "127.0.0.1"
    user: str = USER
    password: str = PASSWORD
    database: str = DATABASE

    @property
    def conninfo(self) -> str:
        return (f"host={self.host} port={self.port} user={self.user} password={self.password} "
                f"dbname={self.database}")

    @property
    def jdbc_url(self) -> str:
        return f"jdbc:postgresql://{self.host}:{self.port}/{self.database}"

    def connect(self, **kwargs):
        """A psycopg connection in autocommit mode."""
        import psycopg

        return psycopg.connect(self.conninfo, autocommit=True, **kwargs)

    def execute(self, sql: str, params=None) -> list[tuple]:
        """Run one statement; its rows (empty for a statement without any)."""
        with self.connect() as conn, conn.cursor() as cur:
            cur.execute(sql, params)
            return cur.fetchall() if cur.description else []

    def _ctl(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        return subprocess.run(_as_server_user([str(BIN / "pg_ctl"), "-D", str(self.directory / "data"), *args]),
                              capture_output=True, text=True, check=check, timeout=120)

    def start(self) -> None:
        """Start it (again, after ``kill``) on the same port with the same data; AssertionError with its log."""
        result = self._ctl("-l", str(self.directory / "server.log"), "-w", "-t", "60", "start", check=False)
        log = (self.directory / "server.log").read_text(errors="replace")[-2000:] if \
            (self.directory / "server.log").exists() else ""
        assert result.returncode == 0, f"pg_ctl start failed: {result.stdout}{result.stderr}\n{log}"

    def stop(self) -> None:
        """A fast shutdown (clients disconnected, everything written)."""
        self._ctl("-m", "fast", "-w", "stop", check=False)

    def kill(self) -> None:
        """An immediate shutdown, as a crash ends it: recovery replays the WAL at the next start."""
        self._ctl("-m", "immediate", "-w", "stop", check=False)


def _init(directory: Path, port: int, wal_level: str) -> None:
    data = directory / "data"
    pwfile = directory / "pw"
    pwfile.write_text(PASSWORD + "\n")
    if os.geteuid() == 0:
        shutil.chown(directory, "postgres", "postgres")
        shutil.chown(pwfile, "postgres", "postgres")
    subprocess.run(_as_server_user([str(BIN / "initdb"), "-D", str(data), "-U", USER, f"--pwfile={pwfile}",
                                    "--auth-host=scram-sha-256", "--auth-local=trust", "-E", "UTF8",
                                    "--locale=C.UTF-8"]),
                   capture_output=True, text=True, check=True, timeout=120)
    with open(data / "postgresql.conf", "a") as conf:
        conf.write(f"\nport = {port}\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '{directory}'\n"
                   f"wal_level = {wal_level}\nmax_replication_slots = 10\nmax_wal_senders = 10\n"
                   "fsync = off\nsynchronous_commit = off\nfull_page_writes = off\nshared_buffers = 32MB\n")


@contextlib.contextmanager
def postgres_server(database: str = DATABASE, wal_level: str = "logical"):
    """Yield a running :class:`PostgresServer` with an empty database ``database`` (``wal_level`` replica: one
    change data capture cannot use); stop it and remove its folder on exit."""
    require_postgres()
    directory = Path(tempfile.mkdtemp(prefix="flinkbench-pg-"))
    os.chmod(directory, 0o700)
    server = PostgresServer(directory, free_port(), database=database)
    try:
        _init(directory, server.port, wal_level)
        server.start()
        with _admin(server) as conn:
            conn.execute(f'CREATE DATABASE "{database}"')
        yield server
    finally:
        server.kill()
        shutil.rmtree(directory, ignore_errors=True)


def _admin(server: PostgresServer):
    """A connection to the server's maintenance database ``postgres``."""
    import psycopg

    return psycopg.connect(server.conninfo.replace(f"dbname={server.database}", "dbname=postgres"), autocommit=True)
