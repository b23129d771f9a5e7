"""``%%flink sql``: a cell of Flink SQL statements, run in order on the connected cluster.

DDL, SET/RESET, SHOW and DESCRIBE act on the kernel's catalog and settings (shared with ``%%flink``
cells through ``t_env``); a query becomes a job whose results appear under the cell in the chosen
result mode (``--result-mode table|changelog|tableau``, or ``SET 'sql-client.execution.result-mode'``);
INSERT INTO and statement sets are submitted and shown with their live views. An error names the
statement's line and column in the cell and stops the cell there.
"""
from __future__ import annotations

from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring
from IPython.display import display

from kernel_magics import api_hints
from kernel_magics.chart_options import chart_arguments, results_view_options
from kernel_magics.commands.subcommand import subcommand
from kernel_magics.commands.jobs import CANCEL_WAIT_S, wait_terminal
from kernel_magics.commands.recordings import numbered, start_recording, view_spec, writable
from kernel_magics.errors import FlinkError, cluster_error, one_line
from kernel_magics.job_options import apply_job_options, job_arguments
from kernel_magics.table_env import session_table_env
from runtime.errors import ClusterError
from runtime.sql.errors import SqlError


class SqlCellError(FlinkError):
    """A statement of the cell that cannot run: where it is and what is wrong, one line."""


@subcommand("sql")
@magic_arguments(name="%%flink sql")
@argument("--name", help="job name (default, as Flink names SQL jobs: insert-into_<sink table> or collect)")
@job_arguments
@argument("--wait", action="store_true", help="block until each job ends; interrupting cancels it")
@argument("--max-rows", type=int, default=100, metavar="N", help="rows the live results keep (default 100)")
@argument("--result-mode", choices=["table", "changelog", "tableau"],
          help="table (materialised, updated in place), changelog (+I/-U/+U/-D rows) or tableau (printed rows)")
@argument("-o", dest="output", metavar="VAR", help="the last query's final table as a pandas DataFrame named VAR")
@argument("--show-api", action="store_true", help="also print the equivalent REST call")
@argument("--record", metavar="FILE", help="record each job's event stream and results (the first to FILE, the next "
                                           "to FILE-2 ...), for '%%flink replay FILE'")
@chart_arguments
def sql(session, line: str, cell: str | None = None):
    """Run Flink SQL: %%flink sql [options], then statements separated by ';' (a cell magic)."""
    args = parse_argstring(sql, line)
    if cell is None or not cell.strip():
        raise FlinkError("%%flink sql is a cell magic: put SQL statements in the cell below it")
    results_view_options(args)
    if args.record:
        args.record, args.recorded = writable(args.record), 0
    t_env = session_table_env(session)
    executor = t_env.executor
    executor.overrides = cell_overrides(args)
    try:
        run_statements(session, executor, args, cell)
    finally:
        executor.overrides = {}


def cell_overrides(args) -> dict[str, str]:
    """The settings the cell's options make, for its statements only (a savepoint is taken in run_statements)."""
    from runtime.api.environment import StreamExecutionEnvironment

    env = apply_job_options(StreamExecutionEnvironment(), args, "%%flink sql")
    if args.name:
        env.set("pipeline.name", args.name)  # Flink's key for a SQL job's name: the cluster's views show it too
    return dict(env.config)


def run_statements(session, executor, args, cell: str) -> None:
    from runtime.sql import statements

    try:
        parsed = statements.parse_script(cell)
    except SqlError as err:
        raise SqlCellError(f"{type(err).__name__}: {err}") from None
    if args.from_savepoint:
        executor.env.restore_from = args.from_savepoint
    try:
        for stmt in parsed:
            show_result(session, executor, args, stmt)
    finally:
        executor.env.restore_from = None


def show_result(session, executor, args, stmt) -> None:
    try:
        result = executor.execute(stmt)
    except SqlError as err:
        raise SqlCellError(f"{type(err).__name__}: {err}") from None
    except ClusterError as err:
        raise cluster_error(err, "the statement's job was not accepted") from None
    if result.kind == "ok":
        print(result.text)
    elif result.kind == "rows":
        display(_frame(result.columns, result.rows))
    elif result.kind == "explain":
        print(result.text)
    else:
        show_job(session, executor, args, stmt, result)


def show_job(session, executor, args, stmt, result) -> None:
    from kernel_magics.widgets.job_view import JobView
    from kernel_magics.widgets.sql_view import SqlJobView

    job = session.client.job(result.job.job_id)
    session.shell.user_ns["last_job"] = job
    if args.show_api:
        api_hints.show(session.client.url, session.token_file, "POST", "/jobs", {"job_graph": "<the statement's JobGraph>"})
    name = result.job.name  # the job's own name (--name, else Flink's insert-into_... or collect)
    if result.fields:
        mode = args.result_mode or executor.result_mode
        view = SqlJobView(session, job, name, args.max_rows, args.output, mode, result.columns, stmt.text,
                          chart=results_view_options(args))
    else:
        print(result.text)
        view = JobView(session, job, name, args.max_rows)
    if args.record:
        args.recorded += 1
        start_recording(session, job, name, numbered(args.record, args.recorded), view_spec(view))
    session.show_job(view)
    display(view)
    wait = args.wait or executor.runtime_mode == "batch"
    if wait:
        _wait(session, view, job)


def _wait(session, view, job) -> None:
    try:
        view.wait()
    except KeyboardInterrupt as interrupt:
        job.cancel()
        state = wait_terminal(session.client, job.job_id, CANCEL_WAIT_S)
        raise one_line(interrupt, f"KeyboardInterrupt: job {job.job_id} cancelled ({state})") from None
    session.finish_recording(job.job_id)
    session.updater.flush()
    view.leave_copy("the job ended")
    view.raise_if_failed()


def _frame(columns: list[str], rows: list[tuple]):
    import pandas as pd

    return pd.DataFrame([list(r) for r in rows], columns=columns)


def help_text() -> str:
    return sql.__doc__ or ""


__all__ = ["sql", "parse_argstring"]
