"""A real PostgreSQL server for tests, started as the ZooKeeper tests start ZooKeeper (runtime.examples.postgres:
``initdb`` into a fresh folder, ``pg_ctl`` on a free 127.0.0.1 port, ``wal_level=logical``), stopped and removed
afterwards; a test that needs one fails loudly, naming what to install, where PostgreSQL is missing."""
from __future__ import annotations

import contextlib

from runtime.examples import postgres
from runtime.examples.postgres import JDBC_JAR, PostgresServer
from tests.helpers.ports import free_port

__all__ = ["JDBC_JAR", "PostgresServer", "jdbc_driver_config", "postgres_server", "require_postgres"]


def jdbc_driver_config() -> dict[str, str]:
    """The cluster setting that puts the JDBC driver in the TaskManagers' Spark sessions (for the jdbc scan), when
    the driver is installed; :func:`require_postgres` fails loudly where it is not."""
    return {"spark.jars": str(JDBC_JAR)} if JDBC_JAR.exists() else {}


def require_postgres() -> None:
    """Fail loudly, naming what to install, when the server's binaries, the client or the JDBC driver are missing."""
    reason = postgres.missing() or (None if JDBC_JAR.exists() else f"{JDBC_JAR} is missing: install {postgres.INSTALL}")
    assert reason is None, f"PostgreSQL for the tests: {reason}"


@contextlib.contextmanager
def postgres_server(database: str = postgres.DATABASE, wal_level: str = "logical"):
    """Yield a running :class:`PostgresServer` with an empty database ``database`` (``wal_level`` replica: one change
    data capture cannot use); stop it and remove its folder on exit."""
    require_postgres()
    with postgres.postgres_server(database, wal_level, free_port()) as server:
        yield server
