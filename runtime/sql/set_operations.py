"""INTERSECT and EXCEPT, with and without ALL, planned as Flink plans them: one aggregation over both inputs.

Each side's rows are tagged (a left row counts 1 in ``__cl``, a right row 1 in ``__cr``), the two are unioned
and grouped by every column, so NULLs meet as equals, as set operations want. INTERSECT keeps a group seen on
both sides, EXCEPT one seen on the left only; their ALL forms repeat it min(left, right) or left - right
times (Spark's ``explode`` of a sequence). The result is updating in streaming mode, like Flink's.
"""
from __future__ import annotations

from sqlglot import exp

from runtime.sql.errors import SqlValidationError
from runtime.sql.logical import Aggregate, Calc, Field, GroupAggregate, Node, Union
from runtime.sql.scope import quoted

LEFT_COUNT, RIGHT_COUNT, COPIES = "__cl", "__cr", "__copy"


def plan(converter, query: exp.Intersect | exp.Except) -> Node:
    """The plan of ``left INTERSECT|EXCEPT [ALL] right``."""
    left, right = converter.query(query.this), converter.query(query.expression)
    word = type(query).__name__.upper()
    if len(left.fields) != len(right.fields):
        raise SqlValidationError(f"{word} of {len(left.fields)} and {len(right.fields)} columns: both sides need "
                                 "the same number of columns")
    names = left.names
    union = Union(list(left.fields) + [Field(LEFT_COUNT, "INT"), Field(RIGHT_COUNT, "INT")],
                  [_tagged(left, left, 1, 0), _tagged(right, left, 0, 1)])
    aggregates = [Aggregate(LEFT_COUNT, "sum", LEFT_COUNT, "INT", True), Aggregate(RIGHT_COUNT, "sum", RIGHT_COUNT,
                                                                                   "INT", True)]
    grouped = GroupAggregate(list(union.fields), union, list(names), aggregates, emit_final=converter.batch)
    every = not query.args.get("distinct", True)
    left_n, right_n = quoted(LEFT_COUNT), quoted(RIGHT_COUNT)
    if isinstance(query, exp.Intersect):
        keep, copies = f"{left_n} > 0 AND {right_n} > 0", f"least({left_n}, {right_n})"
    else:
        keep, copies = f"{left_n} > {right_n}" if every else f"{left_n} > 0 AND {right_n} = 0", f"{left_n} - {right_n}"
    passing = [(n, quoted(n)) for n in names]
    if not every:
        return Calc(list(left.fields), grouped, passing, keep)
    repeated = Calc(list(left.fields) + [Field(COPIES, "INT")], grouped,
                    passing + [(COPIES, f"explode(sequence(1, {copies}))")], keep)
    return Calc(list(left.fields), repeated, passing)


def _tagged(side: Node, left: Node, in_left: int, in_right: int) -> Calc:
    """A side's rows under the left side's names and types, with its counts."""
    exprs = [(f.name, quoted(g.name) if f.type == g.type else f"CAST({quoted(g.name)} AS {f.type})")
             for f, g in zip(left.fields, side.fields)]
    exprs += [(LEFT_COUNT, str(in_left)), (RIGHT_COUNT, str(in_right))]
    return Calc(list(left.fields) + [Field(LEFT_COUNT, "INT"), Field(RIGHT_COUNT, "INT")], side, exprs)
