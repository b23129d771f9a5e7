"""``%%flink``: run a cell of DataStream code as a job on the connected cluster.

The cell runs as ordinary Python in the user's namespace, with ``env`` bound to a fresh
StreamExecutionEnvironment for the connected cluster and the API's names (``col``, ``lit``,
``expr``, ``when``, ``F``, the window and watermark classes, ``agg`` and everything ``runtime.api``
exports) available unless the user has names of their own. After the cell, the job it built is
submitted (unless the cell submitted it itself) and its live view is shown; streaming cells return
at once, ``--wait`` (the default in batch mode) blocks until the job ends, and interrupting a
waiting cell cancels the job. ``last_job``
in the user's namespace is then the job's JobClient, so later cells can push rows into its push
sources (``last_job.push("clicks in", df)``), take a savepoint or cancel it.
"""
from __future__ import annotations

from IPython.display import display

from kernel_magics import api_hints
from kernel_magics.chart_options import results_view_options
from kernel_magics.commands.jobs import CANCEL_WAIT_S, wait_terminal
from kernel_magics.commands.recordings import start_recording, view_spec, writable
from kernel_magics.errors import CellSyntaxError, FlinkError, cluster_error, one_line, trim_to_cell
from kernel_magics.job_options import apply_job_options
from runtime.client import ClusterError
from runtime.config import ConfigError


WINDOW_NAMES = ("WatermarkStrategy", "TumblingEventTimeWindows", "SlidingEventTimeWindows", "EventTimeSessionWindows",
                "agg")


def cell_names() -> dict:
    """The names a %%flink cell can use without importing them."""
    import runtime.api as api
    from runtime.api import functions as F
    from runtime.api import windows

    names = {name: getattr(api, name) for name in getattr(api, "__all__", [])}
    names.update({name: getattr(windows, name) for name in WINDOW_NAMES if hasattr(windows, name)})
    names.update(F=F, col=F.col, lit=F.lit, expr=F.expr, when=F.when)
    return names


def make_environment(session, args):
    from runtime.api.environment import StreamExecutionEnvironment

    env = StreamExecutionEnvironment(session.client)
    from kernel_magics.table_env import shared_catalog, ship_kernel_files
    from runtime.table import StreamTableEnvironment

    env.table_catalog = shared_catalog(session)  # SQL and DataStream cells see the same tables
    env.table_env = StreamTableEnvironment.create(env)
    ship_kernel_files(session, env)
    return apply_job_options(env, args, "%%flink")


def run_cell_code(shell, cell: str) -> None:
    """Compile and run the cell in the user namespace; errors point at the cell's own lines.

    The source gets one leading newline so that line numbers count the ``%%flink`` line too and match
    what the notebook shows.
    """
    source = "\n" + shell.transform_cell(cell)
    filename = shell.compile.cache(source, shell.execution_count, raw_code=cell)
    try:
        code = shell.compile(source, filename, "exec")
    except SyntaxError as err:
        raise CellSyntaxError(shell, err) from None
    try:
        exec(code, shell.user_global_ns, shell.user_ns)
    except Exception as err:
        raise trim_to_cell(shell, err, filename)  # noqa: B904 - the cell's own exception, its cause kept


def check_sinks(env) -> bool:
    """Refuse a cell that built nothing to run; returns whether results come back (a collect sink)."""
    if not env.operators:
        raise FlinkError("the cell built no job: start a stream from env (e.g. env.datagen(...) or "
                         "env.from_source(...)) and end it with .collect() to see results here")
    sinks = [op for op in env.operators if op.kind == "sink"]
    if not sinks:
        sources = ", ".join(repr(op.name) for op in env.operators if op.kind == "source") or "the cell"
        raise FlinkError(f"the cell defines no sink, so the stream from {sources} goes nowhere: end it with "
                         ".collect() (results appear under the cell), .print(), .blackhole() or .sink_to(...)")
    return any(op.params.get("connector") == "collect" for op in sinks)


def savepoint_fit(client, env, name: str, args):
    """``--check-savepoint``: how the savepoint fits the job the cell built; nothing is submitted."""
    from kernel_magics.commands.savepoints import check_graph
    from runtime.jobgraph import job_graph_json

    if not args.from_savepoint:
        raise FlinkError("--check-savepoint checks the savepoint --from-savepoint PATH names: give both")
    return check_graph(client, args.from_savepoint, job_graph_json(env.job_graph(name)), args.allow_non_restored_state)


def submit_built(session, env, name: str, args):
    """Submit the job the cell built (and did not submit itself); its JobClient."""
    check_sinks(env)
    client = session.require_client()
    env._client = client
    if args.show_api:
        api_hints.show(client.url, session.token_file, "POST", "/jobs", {"job_graph": "<the cell's JobGraph>"},
                       cli="run" + (f" --from-savepoint {args.from_savepoint}" if args.from_savepoint else "")
                       + (" --allowNonRestoredState" if args.allow_non_restored_state else "") + " cell.py")
    try:
        return env.execute_async(name)
    except ClusterError as err:
        raise cluster_error(err, "the job was not accepted") from None
    except ConfigError as err:
        raise FlinkError(f"the job's configuration: {err}") from None


def submit_cell(session, args, cell: str):
    """The whole of a %%flink cell: run the code, submit, show the view, and wait if asked."""
    shell = session.shell
    chart = results_view_options(args)
    if args.record:
        args.record = writable(args.record)
    env = make_environment(session, args)
    for name, value in cell_names().items():
        shell.user_ns.setdefault(name, value)
    shell.user_ns.update(env=env, t_env=env.table_env)  # t_env: the Table API over the kernel's catalog
    try:
        run_cell_code(shell, cell)
    except ClusterError as err:  # the cell called env.execute...() itself
        raise cluster_error(err, "the cell's job could not be submitted") from None
    name = args.name or f"notebook cell In[{shell.execution_count}]"
    job = env.last_job
    if job is None and args.check_savepoint:
        check_sinks(env)
        return savepoint_fit(session.require_client(), env, name, args)
    if job is None:
        job = submit_built(session, env, name, args)
    elif session.client is None:
        raise FlinkError("the cell submitted a job itself, but this kernel is not connected, so there is no view")
    shell.user_ns["last_job"] = job  # later cells reach the job through it, e.g. last_job.push(source, rows)
    handle = session.client.job(job.job_id)
    if args.record:
        start_recording(session, handle, name, args.record, view_spec(None))
    show_view(session, handle, name, args, chart)
    return None


def show_view(session, job, name: str, args, chart) -> None:
    """The job's live view under the cell; with --wait (or in batch mode) block until the job ended and leave the
    view's static copy in this cell. Interrupting a waiting cell cancels the job, even while the view's first
    import (ipywidgets, bokeh: seconds on a loaded machine) is under way."""
    wait = args.wait or args.mode == "batch"
    try:
        from kernel_magics.widgets.job_view import JobView

        view = JobView(session, job, name, args.max_rows, args.output, chart=chart)
        session.show_job(view)
        display(view)
        if not wait:
            return
        view.wait()
    except KeyboardInterrupt as interrupt:
        if not wait:
            raise  # a streaming cell's job runs on; '%flink attach' brings its view back
        job.cancel()
        state = wait_terminal(session.client, job.job_id, CANCEL_WAIT_S)
        raise one_line(interrupt, f"KeyboardInterrupt: job {job.job_id} cancelled ({state})") from None
    session.finish_recording(job.job_id)
    session.updater.flush()
    view.leave_copy("the job ended")
    view.raise_if_failed()
