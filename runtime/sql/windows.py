"""Window table functions: TUMBLE, HOP, CUMULATE and SESSION over a table's time attribute."""
from __future__ import annotations

from sqlglot import exp

from runtime.sql.errors import SqlValidationError, UnsupportedSqlError
from runtime.sql.logical import Calc, Field, WindowTVF
from runtime.sql.scope import Entry, Scope, quoted
from runtime.sql.tables import interval_micros

WINDOW_FIELDS = ("window_start", "window_end", "window_time")
ARITY = {"TUMBLE": (3, 4), "HOP": (4, 5), "CUMULATE": (4, 5), "SESSION": (3, 3)}


def table_function(converter, node: exp.Table, alias: str | None) -> Scope:
    """``TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL ...))`` in FROM."""
    outer = node.this
    if outer.name.upper() != "TABLE" or len(outer.expressions) != 1 or not isinstance(outer.expressions[0], exp.Anonymous):
        raise converter.error(node, f"table function {outer.sql(dialect='spark')} is not supported; "
                                    "window functions are TABLE(TUMBLE|HOP|CUMULATE|SESSION(...))", UnsupportedSqlError)
    call = outer.expressions[0]
    kind, args = call.name.upper(), call.expressions
    if kind not in ARITY:
        raise converter.error(call, f"table function {kind} is not supported (TUMBLE, HOP, CUMULATE, SESSION)",
                              UnsupportedSqlError)
    low, high = ARITY[kind]
    if not low <= len(args) <= high:
        raise converter.error(call, f"{kind} takes {low}{'' if low == high else f' to {high}'} arguments, "
                                    f"got {len(args)}")
    data = args[0]
    if not isinstance(data, exp.Table):
        raise converter.error(call, f"the first argument of {kind} is TABLE name")
    partition = [c.name for c in data.args.get("partition_by") or []]
    inner = converter.relation(exp.Table(this=data.this, db=data.args.get("db")))
    time_column = _descriptor(converter, call, args[1], inner)
    window = _window_params(converter, kind, args[2:], call)
    # window_time keeps the time attribute's type (TIMESTAMP or TIMESTAMP_LTZ); the bounds are TIMESTAMPs, as in Flink
    tvf_fields = list(inner.node.fields) + [Field(n, "TIMESTAMP") for n in WINDOW_FIELDS[:2]]
    tvf_fields.append(Field("window_time", inner.node.type_of(time_column)))
    tvf = WindowTVF(tvf_fields, inner.node, window, time_column, [inner.resolve(exp.column(p)) for p in partition])
    entries = [Entry(alias or e.qualifier, e.name, e.field) for e in inner.entries]
    entries += [Entry(alias, n, n) for n in WINDOW_FIELDS]
    return Scope(tvf, entries, converter.position)


def _descriptor(converter, call, arg: exp.Expr, inner: Scope) -> str:
    if not (isinstance(arg, exp.Anonymous) and arg.name.upper() == "DESCRIPTOR" and len(arg.expressions) == 1):
        raise converter.error(call, f"the second argument of {call.name.upper()} is DESCRIPTOR(time_column)")
    field = inner.resolve(arg.expressions[0])
    if field != inner.node.rowtime:
        raise converter.error(arg, f"{call.name.upper()} needs a time attribute: {field!r} is not one (declare "
                                   f"WATERMARK FOR {field} AS ... in its table)")
    return field


def _window_params(converter, kind: str, args: list[exp.Expr], call) -> dict:
    try:
        sizes = [interval_micros(a) for a in args]
    except (UnsupportedSqlError, SqlValidationError) as err:
        raise converter.error(call, f"{kind}: {err.message}") from None
    if any(s <= 0 for s in sizes):
        raise converter.error(call, f"{kind}: window sizes must be positive")
    if len(sizes) > {"TUMBLE": 1, "HOP": 2, "CUMULATE": 2, "SESSION": 1}[kind]:
        raise converter.error(call, "window offsets are not supported", UnsupportedSqlError)
    if kind == "TUMBLE":
        return {"type": "tumbling", "size_us": sizes[0], "slide_us": sizes[0]}
    if kind == "HOP":
        slide, size = sizes[0], sizes[1]
        if size % slide:
            raise converter.error(call, "HOP: the size must be a whole multiple of the slide")
        return {"type": "sliding", "size_us": size, "slide_us": slide}
    if kind == "CUMULATE":
        step, size = sizes[0], sizes[1]
        if size % step:
            raise converter.error(call, "CUMULATE: the max size must be a whole multiple of the step")
        return {"type": "cumulate", "size_us": size, "slide_us": size, "step_us": step}
    return {"type": "session", "gap_us": sizes[0]}


def plain_tvf(converter, scope: Scope) -> Scope:
    """A window TVF read row by row (no aggregation, no window join): see plain_calc."""
    if not isinstance(scope.node, WindowTVF):
        return scope
    return Scope(plain_calc(scope.node), scope.entries, scope.position)


def plain_calc(node: WindowTVF) -> Calc:
    """Each row once per window it falls in, with the window's bounds, as Calcs in Spark (TUMBLE: one window
    a row; HOP: size / slide; CUMULATE: one per step still to come). SESSION windows need every row of a
    key and are refused (UnsupportedSqlError)."""
    window = node.window
    if window["type"] == "session":
        raise UnsupportedSqlError(f"a {node.describe()} is supported only under GROUP BY window_start, window_end; "
                                  "TUMBLE, HOP and CUMULATE can also be selected from or joined directly")
    ts = f"unix_micros({quoted(node.time_column)})"
    passing = [(n, quoted(n)) for n in node.input.names]
    if window["type"] == "tumbling":
        start = f"{ts} - pmod({ts}, {window['size_us']}L)"
        return Calc(node.fields, node.input, passing + _bounds(start, f"{start} + {window['size_us']}L"),
                    keeps_rowtime=node.input.rowtime)
    if window["type"] == "sliding":
        slide, size = window["slide_us"], window["size_us"]
        ks = f"sequence(0, {size // slide - 1})"
        start = f"{ts} - pmod({ts}, {slide}L) - CAST(k AS BIGINT) * {slide}L"
        end = f"{start} + {size}L"
    else:  # cumulate: the same start; ends every step from the row's own step up to the max size
        step, size = window["step_us"], window["size_us"]
        ks = f"sequence(CAST(floor(pmod({ts}, {size}L) / {step}) AS INT) + 1, {size // step})"
        start = f"{ts} - pmod({ts}, {size}L)"
        end = f"{start} + CAST(k AS BIGINT) * {step}L"
    structs = ", ".join(f"'{n}', {sql}" for n, sql in _bounds(start, end))
    windows = Field("__window", "STRUCT<window_start: TIMESTAMP, window_end: TIMESTAMP, window_time: TIMESTAMP>")
    exploded = Calc(list(node.input.fields) + [windows], node.input,
                    passing + [("__window", f"explode(transform({ks}, k -> named_struct({structs})))")],
                    keeps_rowtime=node.input.rowtime)
    return Calc(node.fields, exploded, passing + [(n, f"`__window`.{n}") for n in WINDOW_FIELDS],
                keeps_rowtime=node.input.rowtime)


def _bounds(start_us: str, end_us: str) -> list[tuple[str, str]]:
    """window_start, window_end and window_time (the end less 1 ms, Flink's) from microsecond expressions."""
    return [("window_start", f"timestamp_micros({start_us})"), ("window_end", f"timestamp_micros({end_us})"),
            ("window_time", f"timestamp_micros({end_us} - 1000L)")]
