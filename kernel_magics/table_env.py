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
    ship_kernel_files(session, session.table_env.env)
    return session.table_env


def kernel_python_files(session) -> list[str]:
    """The files and folders ``%flink add-file`` ships with every job of the kernel."""
    if getattr(session, "python_files", None) is None:
        session.python_files = []
    return session.python_files


def ship_kernel_files(session, env) -> None:
    """Add the kernel's ``%flink add-file`` paths to ``env``'s python.files (beside what the cell adds)."""
    for path in kernel_python_files(session):
        env.add_python_file(path)


def bind_table_env(session) -> None:
    """``t_env`` in the user's namespace once connected (unless the user has one): any cell can then register
    Python functions for %%flink sql cells (``t_env.create_temporary_system_function``)."""
    session.shell.user_ns.setdefault("t_env", session_table_env(session))
