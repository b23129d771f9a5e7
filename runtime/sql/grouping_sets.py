"""GROUPING SETS, ROLLUP and CUBE, planned as Flink plans them: an Expand, then one aggregation.

Each input row is repeated once per grouping set (Spark's ``explode`` in the producer's plan), with the keys
that set leaves out set to NULL and a grouping id ``__gid`` telling the sets apart: bit ``n-1-i`` is set when
key ``i`` is not in the set, so ``GROUPING(k)`` and ``GROUPING_ID(k, ...)`` read their bits. The aggregation
then groups by every key plus ``__gid``; the id itself is not a result column.
"""
from __future__ import annotations

import itertools

from sqlglot import exp

from runtime.sql.logical import Calc, Field
from runtime.sql.scope import quoted

GROUPING_ID = "__gid"
_EXPANDED = "__expanded"


def grouping(converter, group: exp.Group | None) -> tuple[list[exp.Expr], list[list[int]] | None]:
    """The distinct GROUP BY expressions and, when the clause has GROUPING SETS, ROLLUP or CUBE, each set as the
    positions of its expressions among them (None for a plain GROUP BY)."""
    if group is None:
        return [], None
    exprs: list[exp.Expr] = []
    factors: list[list[list[exp.Expr]]] = []  # each item of the clause: its alternative sets
    plain = True
    for item in group.expressions:
        if isinstance(item, (exp.GroupingSets, exp.Rollup, exp.Cube)):
            plain = False
            factors.append(_alternatives(item))
        else:
            factors.append([[item]])
    for sets in factors:
        for alternative in sets:
            for e in alternative:
                if not any(e == known for known in exprs):
                    exprs.append(e)
    if plain:
        return exprs, None
    sets = []
    for combination in itertools.product(*factors):
        members = {next(i for i, known in enumerate(exprs) if known == e) for part in combination for e in part}
        sets.append(sorted(members))
    return exprs, sets


def _alternatives(item: exp.Expr) -> list[list[exp.Expr]]:
    columns = [_unwrapped(e) for e in item.expressions]
    if isinstance(item, exp.Rollup):
        return [columns[:n] for n in range(len(columns), -1, -1)]
    if isinstance(item, exp.Cube):
        return [[c for c, keep in zip(columns, mask) if keep]
                for mask in itertools.product((True, False), repeat=len(columns))]
    out = []
    for e in item.expressions:
        if isinstance(e, exp.Tuple):
            out.append([_unwrapped(c) for c in e.expressions])
        else:
            out.append([_unwrapped(e)])
    return out


def _unwrapped(e: exp.Expr) -> exp.Expr:
    return e.this if isinstance(e, exp.Paren) else e


def expand(pre: Calc, keys: list[str], sets: list[list[int]]) -> Calc:
    """``pre``'s rows once per grouping set: keys outside the set NULL, and the set's grouping id."""
    types = {f.name: f.type for f in pre.fields}
    others = [n for n in pre.names if n not in keys]
    structs = []
    for members in sets:
        gid = sum(1 << (len(keys) - 1 - i) for i in range(len(keys)) if i not in members)
        values = [f"'{k}', " + (quoted(k) if i in members else f"CAST(NULL AS {types[k]})") for i, k in enumerate(keys)]
        structs.append(f"named_struct({', '.join(values + [f''''{GROUPING_ID}', {gid}'''])})")
    struct_type = ", ".join([f"`{k}`: {types[k]}" for k in keys] + [f"`{GROUPING_ID}`: INT"])
    exploded = Calc(list(pre.fields) + [Field(_EXPANDED, f"STRUCT<{struct_type}>")], pre,
                    [(n, quoted(n)) for n in pre.names] + [(_EXPANDED, f"explode(array({', '.join(structs)}))")],
                    keeps_rowtime=pre.rowtime)
    fields = [Field(n, types[n]) for n in others] + [Field(k, types[k]) for k in keys] + [Field(GROUPING_ID, "INT")]
    exprs = [(n, quoted(n)) for n in others] + [(k, f"{quoted(_EXPANDED)}.{quoted(k)}") for k in keys + [GROUPING_ID]]
    return Calc(fields, exploded, exprs, keeps_rowtime=pre.rowtime)


def grouping_calls(expr: exp.Expr, group_exprs: list[exp.Expr], keys: list[str]) -> list[tuple[exp.Expr, exp.Expr]]:
    """Replacements of ``GROUPING(k)`` and ``GROUPING_ID(k, ...)`` in ``expr`` by reads of the grouping id."""
    pairs: list[tuple[exp.Expr, exp.Expr]] = []
    for call in list(expr.find_all(exp.Grouping, exp.GroupingId)):
        bits = []
        for arg in call.expressions:
            position = next((i for i, g in enumerate(group_exprs) if g == arg), None)
            if position is None:
                raise ValueError(f"{call.sql(dialect='spark')}: {arg.sql(dialect='spark')} is not a GROUP BY key")
            bits.append(f"((`{GROUPING_ID}` >> {len(keys) - 1 - position}) & 1)")
        width = len(bits)
        total = " + ".join(f"({b} << {width - 1 - i})" for i, b in enumerate(bits))
        pairs.append((call, exp.maybe_parse(f"CAST({total} AS BIGINT)", dialect="spark")))
    return pairs
