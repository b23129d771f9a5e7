"""The kernel's one catalog and Table environment, shared by ``%%flink sql`` cells, ``%%flink`` cells (their
``t_env``) and any other cell once the kernel is connected (``t_env`` in the user's namespace), so Python
functions registered in one cell are called by SQL in the next."""
from __future__ import annotations


def shared_catalog(session):
    """The kernel's catalog (Flink's in-memory catalog): %%flink sql cells and %%flink cells share it."""
    from runtime.sql.catalog import Catalog

    if getattr(session, "catalog", None) is None:
        session.catalog = Catalog()
    return session.catalog


def session_table_env(session):
    """The kernel's StreamTableEnvironment: one catalog and one set of settings for all its cells."""
    from runtime.api.environment import StreamExecutionEnvironment
    from runtime.table import StreamTableEnvironment

    if getattr(session, "table_env", None) is None:
        env = StreamExecutionEnvironment(session.client)
        env.table_catalog = shared_catalog(session)
        session.table_env = StreamTableEnvironment.create(env)
    session.table_env.env._client = session.require_client()
    return session.table_env


def bind_table_env(session) -> None:
    """``t_env`` in the user's namespace once connected (unless the user has one): any cell can then register
    Python functions for %%flink sql cells (``t_env.create_temporary_system_function``)."""
    session.shell.user_ns.setdefault("t_env", session_table_env(session))
