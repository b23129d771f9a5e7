"""``--chart line|bar|area --x COL --y COL[,COL] [--by COL]``: the options that draw a cell's live results as a
chart (runtime.views.charts), one definition for every cell magic that shows results (``%%flink`` and
``%%flink sql``)."""
from __future__ import annotations

from IPython.core.magic_arguments import argument

from kernel_magics.errors import FlinkError
from runtime.views.charts import CHART_KINDS, ChartSpec

CHART_ARGUMENTS = (
    (("--chart",), {"choices": CHART_KINDS, "help": "draw the results as a live chart (a re-fired window moves its point)"}),
    (("--x",), {"metavar": "COL", "help": "the chart's x column (e.g. window_end)"}),
    (("--y",), {"metavar": "COL[,COL]", "help": "the chart's y column(s), comma-separated"}),
    (("--by",), {"metavar": "COL", "help": "one series per value of COL"}),
)


def chart_arguments(options):
    """Add the chart options to a magic's ``magic_arguments`` function (put it below ``@magic_arguments``)."""
    for flags, kwargs in reversed(CHART_ARGUMENTS):
        options = argument(*flags, **kwargs)(options)
    return options


def chart_spec(args) -> ChartSpec | None:
    """The chart the options ask for, or None; a FlinkError names what is missing."""
    if not args.chart:
        if args.x or args.y or args.by:
            raise FlinkError("--x, --y and --by describe a chart: add --chart line, bar or area")
        return None
    if not args.x or not args.y:
        raise FlinkError(f"--chart {args.chart} needs --x COL and --y COL[,COL]")
    try:
        return ChartSpec(args.chart, args.x, tuple(c.strip() for c in args.y.split(",") if c.strip()), args.by or None)
    except ValueError as err:
        raise FlinkError(f"--chart: {err}") from None


def results_view_options(args) -> ChartSpec | None:
    """Check the options that shape a cell's results view (--max-rows, the chart); the chart, or None."""
    if args.max_rows < 1:
        raise FlinkError("--max-rows must be at least 1")
    return chart_spec(args)
