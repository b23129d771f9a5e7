"""MATCH_RECOGNIZE's expressions: DEFINE conditions into runtime.cep's expression trees, MEASURES into atoms.

A DEFINE condition is evaluated in Python by the match operator, row by row against each partial match
(runtime.cep.expressions), so it is translated into that module's small tree: ``A.price`` is the last
row mapped to A (while A is being tested, the row under test), ``LAST(A.price, n)`` and ``FIRST(A.price,
n)`` count from either end of A's rows, an unqualified column means every variable's rows (``*``), and an
aggregate runs over one variable's rows. What the tree cannot express is refused by name.

A measure is computed in two steps: its navigations and aggregates ("atoms") by the operator from the
finished match, then the expression over them in Spark like any projection, so its functions and types
are those of every other SELECT list.
"""
from __future__ import annotations

import decimal
import json

from sqlglot import exp

from runtime.sql.errors import SqlValidationError, UnsupportedSqlError
from runtime.sql.scope import Scope
from runtime.sql.tables import interval_micros
from runtime.sql.types import spark_type
from runtime.sql.typing import infer_type

ALL = "*"
AGGREGATES = {exp.Count: "count", exp.Sum: "sum", exp.Avg: "avg", exp.Min: "min", exp.Max: "max"}
BINARY: dict[type, str] = {exp.EQ: "eq", exp.NEQ: "ne", exp.LT: "lt", exp.LTE: "le", exp.GT: "gt", exp.GTE: "ge",
                           exp.Add: "add", exp.Sub: "sub", exp.Mul: "mul", exp.Div: "div", exp.Mod: "mod",
                           exp.DPipe: "concat"}
UNARY: dict[type, str] = {exp.Neg: "neg", exp.Abs: "abs", exp.Upper: "upper", exp.Lower: "lower",
                          exp.Length: "char_length"}
NOT_IN_FLINK = {"PREV": "Flink does not support physical offsets within partition (PREV, NEXT): use LAST(var.col, n) "
                        "or FIRST(var.col, n)",
                "CLASSIFIER": "CLASSIFIER() is not supported (as in Flink)",
                "MATCH_NUMBER": "MATCH_NUMBER() is not supported (as in Flink)",
                "MATCH_PROCTIME": "MATCH_PROCTIME() is not supported: matches are ordered by event time here"}
NOT_IN_FLINK["NEXT"] = NOT_IN_FLINK["PREV"]


class PatternExpressions:
    """Translates the expressions of one MATCH_RECOGNIZE over ``scope`` (the input's columns)."""

    def __init__(self, converter, scope: Scope, variables: list[str], time_column: str, anchor: exp.Expr):
        self.converter = converter
        self.anchor = anchor  # where errors point when the expression at fault names no column
        self.scope = scope
        self.variables = variables
        self.time_column = time_column
        self.types = {f.name: f.type for f in scope.node.fields}
        self.atoms: list[dict] = []  # {"name", "ir", "type", "column"}: what the operator computes per match

    def error(self, node: exp.Expr, message: str, cls=UnsupportedSqlError):
        """An error positioned at ``node`` (at the MATCH_RECOGNIZE clause when ``node`` names nothing)."""
        anchored = node if any(True for _ in node.find_all(exp.Identifier)) else self.anchor
        return self.converter.error(anchored, message, cls)

    # -- DEFINE ---------------------------------------------------------------------------------------
    def condition(self, node: exp.Expr) -> list:
        """The expression tree of a DEFINE condition (or any expression evaluated while matching)."""
        return self._tree(node, None)

    def _tree(self, node: exp.Expr, owner: str | None) -> list:
        """``owner``: inside a navigation or aggregate, the one variable its columns may name."""
        if isinstance(node, exp.Paren):
            return self._tree(node.this, owner)
        if isinstance(node, exp.Column):
            return self._column(node, owner)
        if isinstance(node, (exp.Literal, exp.Boolean, exp.Null, exp.Interval)):
            return _literal(self, node)
        navigation = self._navigation(node, owner)
        if navigation is not None:
            return navigation
        return self._call(node, owner)

    def _column(self, node: exp.Column, owner: str | None) -> list:
        variable, field = self._reference(node)
        if owner is not None:
            if variable != owner and variable != ALL:
                raise self.error(node, f"{node.sql(dialect='spark')}: a navigation or aggregate must reference a "
                                       f"single pattern variable ({owner})")
            return ["col", field]
        return ["nav", variable, "last", 0, ["col", field]]

    def _reference(self, node: exp.Column) -> tuple[str, str]:
        """(pattern variable or ``*``, input field) of a column reference."""
        qualifier = node.table or None
        if qualifier is not None and qualifier not in self.variables:
            raise self.error(node, f"{qualifier!r} is not a pattern variable of PATTERN ({', '.join(self.variables)})",
                             SqlValidationError)
        return qualifier or ALL, self.scope.resolve(exp.column(node.name, quoted=True))

    def _navigation(self, node: exp.Expr, owner: str | None) -> list | None:
        """FIRST/LAST(expr [, n]) and aggregates over one variable's rows; None for other nodes."""
        name = node.name.upper() if isinstance(node, exp.Anonymous) else ""
        if name in NOT_IN_FLINK:
            raise self.error(node, NOT_IN_FLINK[name])
        if name in ("FIRST", "LAST"):
            arg, offset = self._offset(node)
            variable = self._owner(arg, owner)
            return ["nav", variable, name.lower(), offset, self._tree(arg, variable)]
        fn = AGGREGATES.get(type(node))
        if fn is None:
            return None
        arg = node.this
        if isinstance(arg, exp.Distinct):
            raise self.error(node, "DISTINCT aggregates are not supported in MATCH_RECOGNIZE (as in Flink)")
        if isinstance(arg, exp.Star) or arg is None:
            return ["agg", fn, ALL, None]
        variable = self._owner(arg, owner)
        return ["agg", fn, variable, self._tree(arg, variable)]

    def _offset(self, node: exp.Anonymous) -> tuple[exp.Expr, int]:
        args = node.expressions
        if not 1 <= len(args) <= 2:
            raise self.error(node, f"{node.name.upper()} takes a column and an optional offset", SqlValidationError)
        if len(args) == 2 and not (isinstance(args[1], exp.Literal) and args[1].is_int and int(args[1].this) >= 0):
            raise self.error(node, f"the offset of {node.name.upper()} is a whole number, 0 or more", SqlValidationError)
        return args[0], int(args[1].this) if len(args) == 2 else 0

    def _owner(self, arg: exp.Expr, outer: str | None) -> str:
        """The one variable the columns of ``arg`` name (``*`` when none is named)."""
        named = {c.table for c in arg.find_all(exp.Column) if c.table}
        if outer is not None and outer != ALL:
            named.add(outer)
        if len(named) > 1:
            raise self.error(arg, f"{arg.sql(dialect='spark')} references the pattern variables "
                                  f"{', '.join(sorted(named))}: a navigation or aggregate must reference one")
        return named.pop() if named else ALL

    def _call(self, node: exp.Expr, owner: str | None) -> list:
        tree = lambda n: self._tree(n, owner)  # noqa: E731 - one recursion, many shapes
        if type(node) in BINARY:
            return ["fn", BINARY[type(node)], tree(node.this), tree(node.expression)]
        if type(node) in UNARY:
            return ["fn", UNARY[type(node)], tree(node.this)]
        if isinstance(node, (exp.And, exp.Or)):
            return ["fn", "and" if isinstance(node, exp.And) else "or", *[tree(c) for c in node.flatten()]]
        if isinstance(node, exp.Not):
            return ["fn", "not", tree(node.this)]
        if isinstance(node, exp.Is):
            test = node.expression
            kind = "is_null" if isinstance(test, exp.Null) else "is_true" if test.this is True else "is_false"
            return ["fn", kind, tree(node.this)]
        if isinstance(node, exp.Between):
            return ["fn", "between", tree(node.this), tree(node.args["low"]), tree(node.args["high"])]
        if isinstance(node, exp.In) and not node.args.get("query"):
            return ["fn", "in", tree(node.this), *[tree(e) for e in node.expressions]]
        if isinstance(node, exp.Like):
            like = ["fn", "like", tree(node.this), tree(node.expression)]
            return ["fn", "not", like] if node.args.get("negate") else like
        return self._call_more(node, tree)

    def _call_more(self, node: exp.Expr, tree) -> list:
        if isinstance(node, exp.Case):
            pairs = [part for i in node.args.get("ifs") or [] for part in (tree(i.this), tree(i.args["true"]))]
            default = node.args.get("default")
            return ["fn", "case", *pairs, tree(default) if default is not None else ["lit", None]]
        if isinstance(node, exp.If):
            return ["fn", "case", tree(node.this), tree(node.args["true"]), tree(node.args.get("false") or exp.Null())]
        if isinstance(node, exp.Coalesce):
            return ["fn", "coalesce", tree(node.this), *[tree(e) for e in node.expressions]]
        if isinstance(node, exp.Concat):
            return ["fn", "concat", *[tree(e) for e in node.expressions]]
        if isinstance(node, exp.Cast):
            return ["fn", "cast", tree(node.this), ["lit", spark_type(node.to)]]
        name = node.name.upper() if isinstance(node, exp.Func) and node.name else node.key.upper()
        raise self.error(node, f"{name} is not supported in MATCH_RECOGNIZE's DEFINE and aggregates (comparisons, "
                               "AND/OR/NOT, arithmetic, IS [NOT] NULL, BETWEEN, IN, LIKE, CASE, COALESCE, CAST, ABS, "
                               "UPPER, LOWER, CHAR_LENGTH, CONCAT are)")

    # -- MEASURES -------------------------------------------------------------------------------------
    def measure(self, node: exp.Expr) -> exp.Expr:
        """``node`` with every navigation and aggregate replaced by a column the operator fills (an atom)."""
        def replace(n: exp.Expr):
            if isinstance(n, exp.Anonymous) and n.name.upper() == "MATCH_ROWTIME":
                return self._atom(["nav", ALL, "last", 0, ["col", self.time_column]], "TIMESTAMP", self.time_column,
                                  rowtime=True)
            if isinstance(n, exp.Column):
                variable, field = self._reference(n)
                return self._atom(["nav", variable, "last", 0, ["col", field]], self.types[field], field)
            if isinstance(n, exp.Anonymous) and n.name.upper() in ("FIRST", "LAST"):
                return self._navigated(n)
            if type(n) in AGGREGATES:
                tree = self._navigation(n, None)
                return self._atom(tree, self._aggregate_type(n, tree))
            if isinstance(n, exp.Anonymous) and n.name.upper() in NOT_IN_FLINK:
                raise self.error(n, NOT_IN_FLINK[n.name.upper()])
            return n
        return node.copy().transform(replace)

    def _navigated(self, node: exp.Anonymous) -> exp.Expr:
        """FIRST/LAST(expr, n): ``expr`` over the atoms of its columns on that one row."""
        arg, offset = self._offset(node)
        variable = self._owner(arg, None)

        def column(c: exp.Expr):
            if not isinstance(c, exp.Column):
                return c
            field = self._reference(c)[1]
            return self._atom(["nav", variable, node.name.lower(), offset, ["col", field]], self.types[field], field)
        return arg.copy().transform(column)

    def _aggregate_type(self, node: exp.Expr, tree: list) -> str:
        """Flink's result type: COUNT is BIGINT; SUM, AVG, MIN and MAX keep their argument's type."""
        if tree[1] == "count":
            return "BIGINT"
        arg = node.this
        if isinstance(arg, exp.Column):
            return self.types[self._reference(arg)[1]]
        plain = arg.copy().transform(lambda c: exp.column(self._reference(c)[1], quoted=True)
                                     if isinstance(c, exp.Column) else c)
        return infer_type(plain, self.types)

    def _atom(self, tree: list, type_: str, column: str | None = None, rowtime: bool = False) -> exp.Expr:
        """A column for ``tree`` (the same tree twice is one column); ``column``: the input column it copies,
        ``rowtime``: MATCH_ROWTIME(), a time attribute."""
        key = json.dumps([tree, rowtime])
        found = next((a for a in self.atoms if json.dumps([a["ir"], a["rowtime"]]) == key), None)
        if found is None:
            found = {"name": f"__m{len(self.atoms)}", "ir": tree, "type": type_, "column": column, "rowtime": rowtime}
            self.atoms.append(found)
        return exp.column(found["name"], quoted=True)


def _literal(patterns: PatternExpressions, node: exp.Expr) -> list:
    if isinstance(node, exp.Null):
        return ["lit", None]
    if isinstance(node, exp.Boolean):
        return ["lit", bool(node.this)]
    if isinstance(node, exp.Interval):
        try:
            return ["interval", interval_micros(node)]
        except UnsupportedSqlError as err:
            raise patterns.error(node, err.message) from None
    if node.is_string:
        return ["lit", node.this]
    text = node.this
    if "e" in text.lower():
        return ["lit", float(text)]
    if "." in text:
        return ["dec", str(decimal.Decimal(text))]  # Flink: 1.5 is a DECIMAL literal
    return ["lit", int(text)]
