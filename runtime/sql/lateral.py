"""Python table functions joined to the rows of FROM: ``LATERAL TABLE(f(...))`` as Flink writes it.

``FROM t, LATERAL TABLE(f(x)) AS T(a, b)`` and ``t CROSS JOIN LATERAL TABLE(f(x))`` join each row of ``t``
with every row ``f`` gives for it; ``t LEFT JOIN LATERAL TABLE(f(x)) AS T(a) ON TRUE`` keeps a row ``f``
gives nothing for, with NULLs (Flink takes only ON TRUE there). The function's columns are named by the
alias, else by its result type (``f0``, ``f1``, ... for listed types); a name the left side has already
gets a number, as join columns do. The plan is a Correlate: a mapInArrow in the producer's Spark plan.
"""
from __future__ import annotations

from sqlglot import exp

from runtime.sql import user_functions
from runtime.sql.errors import SqlValidationError, UnsupportedSqlError
from runtime.sql.logical import Correlate, Field
from runtime.sql.scope import Entry, Scope
from runtime.sql.types import parse_type, spark_type


def applies(join: exp.Join) -> bool:
    """Whether ``join`` joins a LATERAL TABLE(...)."""
    return isinstance(join.this, exp.Lateral)


def plan(converter, left: Scope, join: exp.Join) -> Scope:
    """The scope after joining ``left`` with the lateral table of ``join``."""
    lateral = join.this
    wrapper = lateral.this
    if not (isinstance(wrapper, exp.Anonymous) and wrapper.name.upper() == "TABLE" and wrapper.expressions
            and isinstance(wrapper.expressions[0], exp.Anonymous)):
        raise converter.error(join, "LATERAL takes a table function call: LATERAL TABLE(f(...))", UnsupportedSqlError)
    outer = _is_outer(converter, join)
    call = wrapper.expressions[0]
    fdef = _table_function(converter, call)
    args = [user_functions.resolve(a.copy(), converter.catalog, converter.error) for a in call.expressions]
    args = user_functions.typed_arguments(fdef, args, call, converter.error)
    fields = _function_fields(converter, fdef, lateral, left)
    node = Correlate(list(left.node.fields) + fields, left.node, fdef.spark_name, [left.sql(a) for a in args],
                     fields, outer)
    alias = lateral.alias or None
    named = [c.name for c in lateral.args["alias"].columns] if lateral.args.get("alias") is not None and \
        lateral.args["alias"].columns else [f.name for f in fields]
    entries = left.entries + [Entry(alias, n, f.name) for n, f in zip(named, fields)]
    return Scope(node, entries, converter.position)


def _is_outer(converter, join: exp.Join) -> bool:
    side = (join.args.get("side") or "").upper()
    on = join.args.get("on")
    if side not in ("", "LEFT") or (join.args.get("kind") or "").upper() not in ("", "CROSS", "INNER"):
        raise converter.error(join, "a lateral table is joined by a comma, CROSS JOIN, JOIN ... ON TRUE or LEFT JOIN "
                                    "... ON TRUE", UnsupportedSqlError)
    if on is not None and not (isinstance(on, exp.Boolean) and on.this is True):
        raise converter.error(join, "only literal TRUE is supported as the condition of a join with a lateral table",
                              UnsupportedSqlError)
    if side == "LEFT" and on is None:
        raise converter.error(join, "LEFT JOIN LATERAL TABLE(...) needs ON TRUE", UnsupportedSqlError)
    return side == "LEFT"


def _table_function(converter, call: exp.Anonymous):
    name = call.name
    fdef = user_functions.lookup(converter.catalog, name, builtin=False)
    if fdef is None:
        known = ", ".join(f.name for f in converter.catalog.all_functions() if f.kind == "table") or "none"
        raise converter.error(call, f"table function {name!r} does not exist (table functions: {known}); register "
                                    "one made by udtf() first", SqlValidationError)
    if fdef.kind != "table":
        raise converter.error(call, f"function {fdef.name} is a {fdef.kind} function: LATERAL TABLE takes a table "
                                    "function (made by udtf())", SqlValidationError)
    return fdef


def _function_fields(converter, fdef, lateral: exp.Lateral, left: Scope) -> list[Field]:
    """The columns the function adds, named by the alias (else its ROW type's names), unique beside the left side's."""
    struct = parse_type(fdef.function.result_type)
    declared = [(c.name, spark_type(c.args["kind"])) for c in struct.expressions]
    alias = lateral.args.get("alias")
    names = [c.name for c in alias.columns] if alias is not None and alias.columns else [n for n, _ in declared]
    if len(names) != len(declared):
        raise converter.error(lateral, f"LATERAL TABLE({fdef.name}(...)) names {len(names)} column(s), the function "
                                       f"gives {len(declared)}", SqlValidationError)
    taken = set(left.node.names)
    fields = []
    for name, (_, type_) in zip(names, declared):
        unique, n = name, 0
        while unique in taken:
            unique, n = f"{name}{n}", n + 1
        taken.add(unique)
        fields.append(Field(unique, type_))
    return fields
