"""Array expansion: ``CROSS JOIN UNNEST(expr)`` (also ``, UNNEST(expr)``, ``JOIN UNNEST(expr) ON TRUE`` and
``LEFT JOIN UNNEST(expr) ON TRUE``), as Flink plans it into a correlate over the row it reads.

Each row of the left side is repeated once per element of its array (or entry of its map), with the element's
columns after the row's: one column for an array of scalars (``EXPR$0``, or the alias), one per field for an array
of ROWs (the ROW's field names), ``KEY`` and ``VALUE`` for a map; ``WITH ORDINALITY`` adds the element's 1-based
position as a last INT column. A LEFT join keeps a row whose array is NULL or empty, its element columns NULL.

It runs as two Calcs: Spark's ``explode`` (``explode_outer`` for LEFT) of the array, each element paired with its
position, then the element's columns read from the pair. The time attribute and the changelog kind of the left
rows pass through, so windows and aggregations read the expanded rows as they read any other.
"""
from __future__ import annotations

from sqlglot import exp

from runtime.sql.errors import UnsupportedSqlError
from runtime.sql.logical import Calc, Field
from runtime.sql.scope import Entry, Scope, quoted
from runtime.sql.typing import infer_type

PAIR = "__unnest"  # the exploded (element, position) column between the two Calcs


def applies(join: exp.Join) -> bool:
    """Whether ``join`` joins an UNNEST (planned here rather than as a join of two inputs)."""
    return isinstance(join.this, exp.Unnest)


def plan(converter, left: Scope, join: exp.Join) -> Scope:
    """The scope of ``left`` expanded by the UNNEST of ``join``: the left side's names and the element's columns
    under the UNNEST's alias; UnsupportedSqlError for forms Flink does not have or this planner does not run."""
    unnest: exp.Unnest = join.this
    outer = _outer(converter, join)
    if len(unnest.expressions) != 1:
        raise converter.error(unnest, "UNNEST of several arrays at once is not supported: UNNEST one array or map "
                                      "per join", UnsupportedSqlError)
    arg = unnest.expressions[0]
    type_ = infer_type(left.typed(arg), left.types)
    elements = _element_columns(converter, arg, type_)
    alias = unnest.args.get("alias")
    ordinality = unnest.args.get("offset")
    names = _names(converter, unnest, elements, alias, ordinality)
    node = left.node
    array = left.sql(arg) if type_.startswith("ARRAY<") else f"map_entries({left.sql(arg)})"
    element_type = type_[len("ARRAY<"):-1] if type_.startswith("ARRAY<") else \
        f"STRUCT<key: {elements[0][1]}, value: {elements[1][1]}>"
    exploded = Calc([*node.fields, Field(PAIR, f"STRUCT<e: {element_type}, n: INT>")], node,
                    [(n, quoted(n)) for n in node.names] + [(PAIR, _explode(array, outer))], keeps_rowtime=node.rowtime)
    taken = set(node.names)
    fields, exprs, entries = [], [], []
    for name, (_, column_type, path) in zip(names, elements + ([("", "INT", "n")] if ordinality else [])):
        field = _unique(name, taken)
        fields.append(Field(field, column_type))
        exprs.append((field, f"{quoted(PAIR)}.{path}"))
        entries.append(Entry(alias.name if alias is not None and alias.name else None, name, field))
    calc = Calc([*node.fields, *fields], exploded, [(n, quoted(n)) for n in node.names] + exprs,
                keeps_rowtime=node.rowtime)
    return Scope(calc, left.entries + entries, converter.position)


def _outer(converter, join: exp.Join) -> bool:
    """True for LEFT JOIN UNNEST ... ON TRUE, False for the inner forms; anything else is refused."""
    side = (join.args.get("side") or "").upper()
    kind = (join.args.get("kind") or "").upper()
    condition = join.args.get("on")
    plain = condition is None or (isinstance(condition, exp.Boolean) and condition.this is True)
    if side in ("", "LEFT") and kind in ("", "CROSS", "INNER") and plain and not join.args.get("using"):
        return side == "LEFT"
    raise converter.error(join, "UNNEST joins as CROSS JOIN UNNEST(...), JOIN UNNEST(...) ON TRUE or LEFT JOIN "
                                "UNNEST(...) ON TRUE (other conditions go to WHERE)", UnsupportedSqlError)


def _element_columns(converter, arg: exp.Expr, type_: str) -> list[tuple[str, str, str]]:
    """(default name, type, path in the pair) of each column an element gives."""
    dtype = exp.DataType.build(type_, dialect="spark") if type_.startswith(("ARRAY<", "MAP<")) else None
    if dtype is None or not dtype.expressions:
        raise converter.error(arg, f"UNNEST takes an ARRAY or a MAP, not {type_}", UnsupportedSqlError)
    from runtime.sql.types import spark_type

    if dtype.this == exp.DataType.Type.MAP:
        key, value = (spark_type(t) for t in dtype.expressions)
        return [("KEY", key, "e.key"), ("VALUE", value, "e.value")]
    element = dtype.expressions[0]
    if element.this == exp.DataType.Type.STRUCT:
        return [(f.name, spark_type(f.args["kind"]), f"e.{quoted(f.name)}") for f in element.expressions]
    return [("EXPR$0", spark_type(element), "e")]


def _names(converter, unnest: exp.Unnest, elements: list, alias, ordinality) -> list[str]:
    """The columns' names: the alias's column list (the ordinality's last), else Flink's defaults (a single
    column takes the alias's table name)."""
    listed = [c.name for c in alias.columns] if alias is not None else []
    if isinstance(ordinality, exp.Identifier):  # sqlglot moves the last listed name to WITH ORDINALITY
        listed.append(ordinality.name)
    wanted = len(elements) + (1 if ordinality else 0)
    if listed and len(listed) != wanted:
        raise converter.error(unnest, f"UNNEST gives {wanted} columns here, the alias lists {len(listed)}",
                              UnsupportedSqlError)
    if listed:
        return listed
    if len(elements) == 1 and alias is not None and alias.name:
        return [alias.name] + (["ORDINALITY"] if ordinality else [])
    return [name for name, _, _ in elements] + (["ORDINALITY"] if ordinality else [])


def _explode(array: str, outer: bool) -> str:
    """Spark SQL exploding ``array`` into (element, 1-based position) pairs."""
    pairs = f"transform({array}, (e, i) -> named_struct('e', e, 'n', i + 1))"
    return f"{'explode_outer' if outer else 'explode'}({pairs})"


def _unique(name: str, taken: set[str]) -> str:
    """``name``, or ``name0``, ``name1``, ... when the left side has it (Flink's renaming)."""
    found, n = name, 0
    while found in taken:
        found, n = f"{name}{n}", n + 1
    taken.add(found)
    return found
