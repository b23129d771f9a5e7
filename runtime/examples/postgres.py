"""A PostgreSQL server of one's own for examples and teaching notebooks (the tests start theirs with it too):
``initdb`` into a fresh folder, ``pg_ctl`` on a free 127.0.0.1 port with ``wal_level=logical`` (change data
capture reads a logical replication slot), stopped and removed afterwards::

    from runtime.examples.postgres import start_server
    server = start_server()               # a database 'shop', user 'flinkbench'
    server.execute("CREATE TABLE t (id INT PRIMARY KEY)")
    server.jdbc_url, server.port          # for the jdbc and postgres-cdc connectors' options
    server.stop()                         # the server and its folder are gone

Debian's ``postgresql`` package provides the binaries (``scripts/install-system-deps.sh postgresql`` installs it
when root; ``FLINKBENCH_POSTGRES_BIN`` names another folder of them); where they or psycopg are absent,
:func:`require_installed` (and :func:`start_server`) raise PostgresNotInstalled saying what to install.
PostgreSQL refuses to run as root, so as root the server runs as the ``postgres`` user that package creates, with
its folder directly under the temporary directory. Clients connect over TCP with a password (``scram-sha-256``),
so a wrong password is refused as on a real server.
"""
from __future__ import annotations

import contextlib
import os
import random
import shutil
import socket
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

BIN = Path(os.environ.get("FLINKBENCH_POSTGRES_BIN", "/usr/lib/postgresql/15/bin"))
JDBC_JAR = Path("/usr/share/java/postgresql.jar")
USER, PASSWORD, DATABASE = "flinkbench", "flinkbench-secret", "shop"
INSTALL = ("Debian's postgresql, postgresql-15-wal2json and libpostgresql-jdbc-java (as root: bash "
           "scripts/install-system-deps.sh postgresql), and psycopg (pip install 'flinkbench[postgres]')")


class PostgresNotInstalled(RuntimeError):
    """PostgreSQL or its client is missing; in a notebook, one line saying what to install (no traceback)."""

    def _render_traceback_(self) -> list[str]:  # IPython shows this instead of a traceback
        return [f"{type(self).__name__}: {self}"]


def require_installed() -> None:
    """PostgresNotInstalled naming what to install when :func:`missing` finds something missing."""
    reason = missing()
    if reason:
        raise PostgresNotInstalled(reason)


def missing() -> str | None:
    """What is not installed for a server of one's own and its client (a sentence naming what to install), or None."""
    absent = [str(p) for p in (BIN / "initdb", BIN / "pg_ctl") if not p.exists()]
    try:
        import psycopg  # noqa: F401
    except ImportError:
        absent.append("the psycopg module")
    return f"PostgreSQL is not installed here ({', '.join(absent)} missing): install {INSTALL}" if absent else None


def _as_server_user(argv: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *argv] if os.geteuid() == 0 else argv


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
        """Start it (again, after ``kill``) on the same port with the same data; RuntimeError with its log."""
        result = self._ctl("-l", str(self.directory / "server.log"), "-w", "-t", "60", "start", check=False)
        log = (self.directory / "server.log").read_text(errors="replace")[-2000:] if \
            (self.directory / "server.log").exists() else ""
        if result.returncode != 0:
            raise RuntimeError(f"pg_ctl start failed: {result.stdout}{result.stderr}\n{log}")

    def kill(self) -> None:
        """An immediate shutdown, as a crash ends it: recovery replays the WAL at the next start."""
        self._ctl("-m", "immediate", "-w", "stop", check=False)

    def stop(self) -> None:
        """Stop the server and remove its folder."""
        self.kill()
        shutil.rmtree(self.directory, ignore_errors=True)


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


def _unused_port() -> int:
    """A port below the usual ephemeral range that could be bound just now."""
    for _ in range(100):
        port = random.randrange(20_000, 32_000)
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
        return port
    raise RuntimeError("no free port between 20000 and 32000")


def start_server(database: str = DATABASE, wal_level: str = "logical", port: int | None = None) -> PostgresServer:
    """A running server with an empty database ``database`` (``wal_level`` replica makes one change data capture
    cannot use); PostgresNotInstalled naming what to install, RuntimeError with the server's log when it does not
    start."""
    require_installed()
    directory = Path(tempfile.mkdtemp(prefix="flinkbench-pg-"))
    os.chmod(directory, 0o700)
    server = PostgresServer(directory, port or _unused_port(), database=database)
    try:
        _init(directory, server.port, wal_level)
        server.start()
        import psycopg

        with psycopg.connect(server.conninfo.replace(f"dbname={database}", "dbname=postgres"), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{database}"')
    except BaseException:
        server.stop()
        raise
    return server


@contextlib.contextmanager
def postgres_server(database: str = DATABASE, wal_level: str = "logical", port: int | None = None):
    """:func:`start_server` as a context: the server is stopped and its folder removed on exit."""
    server = start_server(database, wal_level, port)
    try:
        yield server
    finally:
        server.stop()
