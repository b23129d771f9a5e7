"""The ``%flink`` line magic and the ``%%flink`` cell magic (thin: the work is in commands/)."""
from __future__ import annotations

from IPython.core.magic import Magics, line_cell_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring

from kernel_magics.chart_options import chart_arguments
from kernel_magics.commands import SUBCOMMANDS, summary
from kernel_magics.errors import FlinkError
from kernel_magics.job_options import job_arguments
from kernel_magics.session import session_for


@magic_arguments(name="%flink")
@argument("--name", help="job name (default: the cell's number)")
@job_arguments
@argument("--wait", action="store_true", help="block until the job ends; interrupting cancels the job")
@argument("--max-rows", type=int, default=100, metavar="N", help="rows the live results table keeps (default 100)")
@argument("-o", dest="output", metavar="VAR", help="put every collected row in a pandas DataFrame named VAR")
@argument("--show-api", action="store_true", help="also print the equivalent REST call and CLI command")
@argument("--record", metavar="FILE", help="record the job's event stream and results to FILE, for '%%flink replay FILE'")
@argument("--check-savepoint", action="store_true",
          help="with --from-savepoint: show how the savepoint fits the cell's job instead of submitting it")
@chart_arguments
def cell_options(line):
    """Run the cell's DataStream code as a job on the connected cluster, with a live view below it.

    The cell is Python with 'env' (a StreamExecutionEnvironment for the cluster) and col, lit, expr,
    when, F ready. Streaming jobs run on in the background; their view and results keep updating.
    Afterwards 'last_job' is the job's handle: last_job.push("source name", rows) feeds a stream
    made with env.push_source(...), last_job.close_source("source name") ends it.
    """


def help_text() -> str:
    commands = SUBCOMMANDS
    width = max(len(n) for n in commands) + 2
    lines = ["%flink SUBCOMMAND [options]   ('%flink help SUBCOMMAND' for its options)", ""]
    lines += [f"  {name:<{width}}{summary(fn)}" for name, fn in commands.items()]
    lines += ["  " + "help".ljust(width) + "this list, or one subcommand's options", "",
              "%%flink [options] - a cell of DataStream code, run as a job:", "", cell_options.__doc__,
              "%%flink sql [options] - a cell of SQL statements ('%flink help sql' lists the options)"]
    return "\n".join(lines)


@magics_class
class FlinkMagics(Magics):
    """The %flink line magic and %%flink cell magic; each subcommand lives in kernel_magics/commands."""
    def __init__(self, shell):
        super().__init__(shell)
        self.session = session_for(shell)

    @line_cell_magic
    def flink(self, line: str, cell: str | None = None):
        if cell is not None:
            from kernel_magics.commands.submit import submit_cell

            words = line.split(None, 1)
            if words and words[0] == "sql":  # %%flink sql: a cell of SQL statements
                return SUBCOMMANDS["sql"](self.session, words[1] if len(words) > 1 else "", cell)

            return submit_cell(self.session, parse_argstring(cell_options, line), cell)
        name, _, rest = line.strip().partition(" ")
        if name in ("", "help", "-h", "--help"):
            return self._help(rest.strip())
        command = SUBCOMMANDS.get(name)
        if command is None:
            raise FlinkError(f"unknown subcommand {name!r}: one of {', '.join(SUBCOMMANDS)} "
                             "('%flink help' describes them)")
        return command(self.session, rest)

    def _help(self, topic: str) -> None:
        if not topic:
            print(help_text())
        elif topic in SUBCOMMANDS:
            print(SUBCOMMANDS[topic].__doc__)
        else:
            raise FlinkError(f"no subcommand {topic!r}: one of {', '.join(SUBCOMMANDS)}")


FlinkMagics.flink.__doc__ = help_text()
