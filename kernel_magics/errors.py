"""How errors look in the notebook: one clear line for usage and cluster errors, the cell's own lines
for an exception in a ``%%flink`` cell, and the remote traceback for a job that failed.

IPython shows an exception's ``_render_traceback_()`` instead of its full stack, which is how a cell
error can point at the cell's line without the magic's own frames around it.
"""
from __future__ import annotations

import functools
from collections.abc import Callable

from IPython.core.error import UsageError

from runtime.errors import ClusterError, ConfigurationError, JobFailed


class FlinkError(UsageError):
    """A %flink/%%flink problem the user can fix, shown as one line (IPython shows only UsageError
    itself that way, so subclasses render themselves)."""

    def _render_traceback_(self) -> list[str]:
        return [f"{type(self).__name__}: {self}"]


class CellSyntaxError(FlinkError):
    """A syntax error in a %%flink cell, shown as Python shows it: the cell, the line, a caret."""

    def __init__(self, shell, err: SyntaxError):
        super().__init__(f"{err.msg} (line {err.lineno})")
        self._lines = shell.SyntaxTB.structured_traceback(type(err), err, [])

    def _render_traceback_(self) -> list[str]:
        return self._lines


def cluster_error(err: Exception, doing: str = "") -> FlinkError:
    """A ClusterError as a FlinkError that says what was being done and, for a lost connection, what next."""
    prefix = f"{doing}: " if doing else ""
    text = str(err)
    if isinstance(err, ClusterError) and err.status is None and "cannot reach" in text:
        text += " (the connection to the cluster is lost; the live views reconnect by themselves, " \
                "and '%flink status' tells when it is back)"
    elif isinstance(err, ClusterError) and err.status == 401:
        text = f"the JobManager refused the cluster token: {text}"
    return FlinkError(prefix + text)


def translating(doing: str) -> Callable:
    """Decorator: cluster, config and security errors out of a subcommand become one-line FlinkErrors."""
    def wrap(fn):
        @functools.wraps(fn)
        def run(*args, **kwargs):
            try:
                return fn(*args, **kwargs)
            except (ClusterError, ConfigurationError) as err:
                raise cluster_error(err, doing) from None
        return run
    return wrap


def trim_to_cell(shell, err: BaseException, filename: str) -> BaseException:
    """Make IPython show ``err``'s traceback from the cell's first frame on (not the magic's frames)."""
    tb = err.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename != filename:
        tb = tb.tb_next
    if tb is not None:
        lines = shell.InteractiveTB.structured_traceback(type(err), err, tb)
        err._render_traceback_ = lambda: lines  # type: ignore[attr-defined]
    return err


def render_job_failure(err: JobFailed, name: str) -> JobFailed:
    """Show a failed job as its name and id, then the remote traceback from the TaskManager."""
    lines = [f"JobFailed: job '{name}' ({err.job_id}) failed. Remote traceback (root cause):", ""]
    lines += err.cause.rstrip().splitlines()
    err._render_traceback_ = lambda: lines  # type: ignore[attr-defined]
    return err


def one_line(err: BaseException, text: str) -> BaseException:
    """Show ``err`` as just ``text`` (e.g. a KeyboardInterrupt that cancelled a job)."""
    err._render_traceback_ = lambda: [text]  # type: ignore[attr-defined]
    return err
