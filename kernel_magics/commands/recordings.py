"""``%flink record`` and ``%flink replay``: a job's event stream to a file, and a file back into a live view.

The work is in runtime.views.recording (the format, the Recorder) and runtime.views.replay; a replay needs
no cluster and no Java, and nothing on its path imports PySpark.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring
from IPython.display import display

from kernel_magics.commands.subcommand import subcommand
from kernel_magics.errors import FlinkError, one_line, translating
from runtime.views.model import ClusterModel


def writable(path: str) -> str:
    """Refuse, before a job starts, a recording that could not be written."""
    target = Path(path).expanduser()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with target.open("a"):
            pass
    except OSError as err:
        raise FlinkError(f"cannot record to {path}: {err.strerror or err}") from None
    return str(target)


def numbered(path: str, n: int) -> str:
    """The file for a cell's n-th recorded job: FILE itself, then FILE-2, FILE-3 ... before its extension."""
    if n <= 1:
        return path
    target = Path(path)
    return str(target.with_name(f"{target.stem}-{n}{target.suffix}"))


def view_spec(view) -> dict:
    """How a recording's replay shows the job: as the view showing it here shows it."""
    from kernel_magics.widgets.sql_view import SqlJobView

    if isinstance(view, SqlJobView):
        return {"kind": "sql", "mode": view.mode, "columns": list(view.columns), "statement": view.statement}
    return {"kind": "datastream"}


def start_recording(session, job, name: str, path: str, spec: dict):
    """Record ``job`` (a JobClient of the connected cluster) to ``path`` until it ends; returns the Recorder."""
    from runtime.views.recording import Recorder
    from runtime.views.stream import take_snapshot

    client = session.require_client()
    old = session.recorders.pop(job.job_id, None)
    if old is not None:
        old.stop()
    recorder = Recorder(path, job, name, session.model, lambda: take_snapshot(client.url, client.token,
                                                                               client.ssl_context), spec)
    try:
        recorder.start()
    except Exception as err:  # noqa: BLE001 - the file, the REST API or the event stream: one line says which
        raise FlinkError(f"cannot record job {job.job_id} to {path}: {type(err).__name__}: {err}") from None
    session.recorders[job.job_id] = recorder
    return recorder


@subcommand("record")
@magic_arguments(name="flink record")
@argument("job", help="job id (or a unique prefix)")
@argument("file", nargs="?", help="where to write the recording (JSON lines)")
@argument("--stop", action="store_true", help="end the job's recording now (the job runs on)")
@translating("cannot record")
def record(session, line: str):
    """Record a running job's event stream and results to a file, for '%flink replay' (until the job ends)."""
    from kernel_magics.commands.jobs import resolve_job

    args = parse_argstring(record, line)
    client = session.require_client()
    job_id = resolve_job(client, args.job)
    if args.stop:
        recorder = session.recorders.pop(job_id, None)
        if recorder is None:
            raise FlinkError(f"job {job_id} is not being recorded")
        recorder.stop()
        print(f"stopped recording job {job_id} to {recorder.path}")
        return
    if not args.file:
        raise FlinkError("where to? '%flink record JOB FILE'")
    name = client.get(f"/jobs/{job_id}").get("name", job_id)
    recorder = start_recording(session, client.job(job_id), name, writable(args.file),
                               view_spec(session.views_of(job_id)))
    print(f"recording job {job_id} ({name}) to {recorder.path} until it ends "
          f"('%flink record {job_id[:8]} --stop' ends it sooner)")


@dataclass
class ReplayHost:
    """What a replayed view has instead of a session: a model of its own, the kernel's updater and shell."""
    model: ClusterModel
    updater: Any
    shell: Any


@subcommand("replay")
@magic_arguments(name="flink replay")
@argument("file", help="a recording made by '%%%%flink --record FILE' or '%%flink record JOB FILE'")
@argument("--speed", type=float, default=1.0, metavar="X", help="play X times as fast as recorded (default 1)")
@argument("--wait", action="store_true", help="block until the replay ends; interrupting stops it")
@argument("--max-rows", type=int, default=100, metavar="N", help="rows the live results table keeps (default 100)")
@argument("-o", dest="output", metavar="VAR", help="put the replayed rows in a pandas DataFrame named VAR")
def replay(session, line: str):
    """Play a recorded job again in its live view, without a cluster (no Java needed): 'last_replay' is its Replay."""
    from runtime.views.recording import RecordingError, read
    from runtime.views.replay import Replay

    args = parse_argstring(replay, line)
    if not args.speed > 0 or args.max_rows < 1:
        raise FlinkError("--speed must be above 0 and --max-rows at least 1")
    try:
        recording = read(args.file)
    except RecordingError as err:
        raise FlinkError(str(err)) from None
    playback = Replay(recording, ClusterModel(), args.speed)
    playback.model.add_listener(session.updater.poke)
    view = _replay_view(ReplayHost(playback.model, session.updater, session.shell), playback, args)
    view.source, view.ended_reason = playback.label(), "the replay ended"
    session.replays.append(view)
    session.shell.user_ns["last_replay"] = playback
    display(view)
    view.start()
    playback.start()
    if args.wait:
        _wait(session, view, playback)


def _replay_view(host: ReplayHost, playback, args):
    from kernel_magics.widgets.job_view import JobView
    from kernel_magics.widgets.sql_view import SqlJobView

    spec = playback.recording.header.get("view") or {}
    name = playback.recording.name
    if spec.get("kind") == "sql":
        return SqlJobView(host, playback.job, name, args.max_rows, args.output, spec.get("mode") or "table",
                          list(spec.get("columns") or []), spec.get("statement") or "")
    return JobView(host, playback.job, name, args.max_rows, args.output)


def _wait(session, view, playback) -> None:
    try:
        view.wait()
    except KeyboardInterrupt as interrupt:
        playback.stop()
        raise one_line(interrupt, f"KeyboardInterrupt: the replay of {playback.recording.path} stopped") from None
    session.updater.flush()
    view.leave_copy(view.ended_reason)
