"""MATCH_RECOGNIZE (Flink's "Pattern Recognition" page) into a Match node and the projection of its measures.

``FROM t MATCH_RECOGNIZE (PARTITION BY k ORDER BY rowtime MEASURES ... [ONE ROW PER MATCH] [AFTER MATCH
SKIP ...] PATTERN (...) [WITHIN interval] DEFINE ...)`` becomes a Match node (the operator that buffers
each key's rows until the watermark passes them, then runs the pattern's NFA over them in time order:
runtime.taskmanager.match_operator, runtime.cep) under a Calc computing the measures. Its output is
Flink's: the partition columns, then the measures, one row per match, append-only; ``MATCH_ROWTIME()``
as a measure is a time attribute for windows after it. What Flink refuses (ALL ROWS PER MATCH, PREV and
NEXT, alternations and groups in PATTERN, reluctant optional variables, patterns that can match nothing,
a greedy quantifier last) is refused here with Flink's reason.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from sqlglot import exp

from runtime.sql.errors import SqlValidationError, UnsupportedSqlError
from runtime.sql.logical import Calc, Field, Node
from runtime.sql.pattern_expressions import PatternExpressions
from runtime.sql.ranking import sort_keys
from runtime.sql.scope import Entry, Scope, quoted
from runtime.sql.tables import interval_micros
from runtime.sql.typing import infer_type

_TOKEN = re.compile(r"\s*(?:(?P<name>[A-Za-z_][A-Za-z0-9_$]*|`(?:[^`]|``)+`)(?P<quantifier>[*+?]|\{[^}]*\})?"
                    r"(?P<reluctant>\?)?|(?P<other>\S))")
_BOUNDS = re.compile(r"\{\s*(\d*)\s*(,?)\s*(\d*)\s*\}")
_SKIP = re.compile(r"AFTER MATCH SKIP (PAST LAST ROW|TO NEXT ROW|TO (FIRST|LAST) (.+))$", re.I)


@dataclass
class Match(Node):
    """MATCH_RECOGNIZE's pattern matching: per partition key, rows in event-time order through the NFA of
    ``pattern`` (runtime.cep's spec); per match one row of the partition columns and the ``atoms``
    (navigations and aggregates the measures need). Append-only."""
    input: Node
    partition: list[str]
    time_column: str
    order: list[tuple[str, bool, bool]]  # ORDER BY after the time attribute: (field, ascending, nulls first)
    pattern: dict
    atoms: list[dict] = field(default_factory=list)
    text: str = ""
    match_rowtime: str | None = None  # the atom holding MATCH_ROWTIME(), a time attribute

    @property
    def rowtime(self) -> str | None:
        """MATCH_ROWTIME(), when the measures have it: the time of each match's last row."""
        return self.match_rowtime

    @property
    def updating(self) -> bool:
        """A match is emitted once: inserts only."""
        return False

    def describe(self) -> str:
        """One line for EXPLAIN: partition, order, pattern, skip strategy, WITHIN and the atoms."""
        order = ", ".join([f"{self.time_column} ASC"] + [f"{c} {'ASC' if a else 'DESC'}" for c, a, _ in self.order])
        kind, *target = self.pattern["skip"]
        skip = " ".join([kind.upper().replace("_", " "), *target])
        within = f", within=[{self.pattern['within_us'] // 1000} ms]" if self.pattern.get("within_us") else ""
        return f"Match(partitionBy=[{', '.join(self.partition)}], orderBy=[{order}], pattern=[{self.text}], " \
               f"skip=[{skip}]{within}, atoms=[{', '.join(a['name'] for a in self.atoms)}])"


def plan(converter, scope: Scope, node: exp.MatchRecognize) -> Scope:
    """The scope of ``FROM ... MATCH_RECOGNIZE (...) [AS alias]``: partition columns and measures."""
    source = scope.node
    if source.updating:
        raise converter.error(node, "MATCH_RECOGNIZE needs an append-only input; this one is updated by "
                                    "an aggregation or join", UnsupportedSqlError)
    rows = node.args.get("rows")
    if rows is not None and rows.name.upper() != "ONE ROW PER MATCH":
        raise converter.error(node, "All rows per match mode is not supported yet (only ONE ROW PER MATCH, as in "
                                    "Flink)", UnsupportedSqlError)
    partition = [scope.resolve(c) for c in node.args.get("partition_by") or []]
    time_column, order = _order(converter, scope, node)
    text = node.args["pattern"].name if node.args.get("pattern") is not None else ""
    variables = parse_pattern(converter, node, text)
    names = [v["name"] for v in variables]
    defined = [d.alias for d in node.args.get("define") or [] if isinstance(d, exp.Alias)]
    expressions = PatternExpressions(converter, scope, names + [d for d in defined if d not in names], time_column, node)
    spec = {"variables": variables, "define": _define(converter, node, expressions, names),
            "skip": _skip(converter, node, variables), "within_us": _within(converter, node)}
    measures = _measures(converter, node, expressions, partition)
    match = Match([Field(p, source.type_of(p)) for p in partition] + [Field(a["name"], a["type"])
                                                                     for a in expressions.atoms],
                  source, partition, time_column, order, spec, expressions.atoms, text)
    return _projected(converter, match, measures, node.alias or None)


def _order(converter, scope: Scope, node: exp.MatchRecognize) -> tuple[str, list]:
    keys = sort_keys(scope, node.args.get("order"))
    rowtime = scope.node.rowtime
    if not keys or keys[0][0] != rowtime or not keys[0][1]:
        raise converter.error(node, "MATCH_RECOGNIZE must be ORDER BY the time attribute first, ascending "
                                    f"({rowtime or 'the input has none: declare a WATERMARK'})", UnsupportedSqlError)
    return rowtime, keys[1:]


def parse_pattern(converter, node: exp.Expr, text: str) -> list[dict]:
    """PATTERN's variables in order: {"name", "min", "max" (None: unbounded), "greedy"}; Flink's limits enforced."""
    variables: list[dict] = []
    for token in _TOKEN.finditer(text):
        if token.group("other"):
            raise converter.error(node, _unsupported_pattern(token.group("other"), text), UnsupportedSqlError)
        name = token.group("name").strip("`")
        if name.upper() == "PERMUTE":
            raise converter.error(node, "PERMUTE is not supported in PATTERN (as in Flink)", UnsupportedSqlError)
        if name in [v["name"] for v in variables]:
            raise converter.error(node, f"pattern variable {name} appears twice in PATTERN ({text}): names must be "
                                        "unique", SqlValidationError)
        low, high = _quantifier(converter, node, token.group("quantifier"))
        reluctant = bool(token.group("reluctant"))
        if reluctant and (low, high) == (0, 1):
            raise converter.error(node, f"{name}??: reluctant optional variables are not supported yet (as in Flink)",
                                  UnsupportedSqlError)
        variables.append({"name": name, "min": low, "max": high, "greedy": not reluctant})
    _check_pattern(converter, node, variables, text)
    return variables


def _unsupported_pattern(char: str, text: str) -> str:
    what = {"|": "alternations (A | B)", "(": "groups of variables", ")": "groups of variables",
            "^": "anchors (^, $)", "$": "anchors (^, $)", "{": "exclusions ({- A -})"}.get(char, f"{char!r}")
    return f"PATTERN ({text}): {what} are not supported (as in Flink): a pattern is a sequence of variables, " \
           "each with an optional quantifier (*, +, ?, {n}, {n,}, {n,m}, and their reluctant forms with ?)"


def _quantifier(converter, node, quantifier: str | None) -> tuple[int, int | None]:
    if quantifier is None:
        return 1, 1
    if quantifier in ("*", "+", "?"):
        return {"*": (0, None), "+": (1, None), "?": (0, 1)}[quantifier]
    bounds = _BOUNDS.fullmatch(quantifier)
    if bounds is None or not bounds.group(1):
        raise converter.error(node, f"quantifier {quantifier} is not {{n}}, {{n,}} or {{n,m}} (Flink fails {{,m}}: write "
                                    "{0,m})", UnsupportedSqlError if bounds is not None else SqlValidationError)
    low = int(bounds.group(1) or 0)
    high = low if not bounds.group(2) else (int(bounds.group(3)) if bounds.group(3) else None)
    if (high is not None and (high < low or high == 0)) or (not bounds.group(2) and low == 0):
        raise converter.error(node, f"quantifier {quantifier}: the bounds need 0 <= n <= m and m > 0", SqlValidationError)
    return low, high


def _check_pattern(converter, node, variables: list[dict], text: str) -> None:
    if not variables:
        raise converter.error(node, "MATCH_RECOGNIZE needs a PATTERN of at least one variable", SqlValidationError)
    if all(v["min"] == 0 for v in variables):
        raise converter.error(node, f"PATTERN ({text}) can match no row at all: patterns that can produce an empty "
                                    "match are not supported (as in Flink)", UnsupportedSqlError)
    last = variables[-1]
    if last["greedy"] and last["max"] != last["min"] and last["max"] != 1:
        raise converter.error(node, f"PATTERN ({text}): greedy quantifiers are not allowed as the last element of a "
                                    "pattern (as in Flink): end with a single variable or a reluctant quantifier",
                              UnsupportedSqlError)


def _define(converter, node, expressions: PatternExpressions, names: list[str]) -> dict[str, list]:
    define = {}
    for item in node.args.get("define") or []:
        name = item.alias if isinstance(item, exp.Alias) else item.name
        condition = expressions.condition(item.this)  # checked even for a variable PATTERN lacks, which Flink ignores
        if name in names:
            define[name] = condition
    return define


def _skip(converter, node, variables: list[dict]) -> list[str]:
    after = node.args.get("after")
    if after is None:
        return ["to_next"]  # Flink's default
    found = _SKIP.match(after.name)
    if found.group(2) is None:
        return ["past_last" if found.group(1).upper().startswith("PAST") else "to_next"]
    target = found.group(3).strip().strip("`")
    names = [v["name"] for v in variables]
    if target not in names:
        raise converter.error(node, f"AFTER MATCH SKIP TO {found.group(2).upper()} {target}: {target} is not a variable "
                                    f"of PATTERN ({', '.join(names)})", SqlValidationError)
    first = variables[0]
    if target == first["name"] and first["min"] > 0 and (found.group(2).upper() == "FIRST" or first["max"] == 1):
        raise converter.error(node, f"AFTER MATCH SKIP TO {found.group(2).upper()} {target} would start the next match "
                                    "at the first row of this one again: Flink fails such a query ('Could not skip to "
                                    "first element of a match')", UnsupportedSqlError)
    return [f"to_{found.group(2).lower()}", target]


def _within(converter, node) -> int | None:
    within = node.args.get("within")
    if within is None:
        return None
    try:
        micros = interval_micros(within)
    except (UnsupportedSqlError, SqlValidationError) as err:
        raise converter.error(node, f"WITHIN: {err.message}", type(err)) from None
    if micros <= 0:
        raise converter.error(node, "WITHIN takes a positive interval", SqlValidationError)
    return micros


def _measures(converter, node, expressions: PatternExpressions, partition: list[str]) -> list[tuple[str, exp.Expr]]:
    measures: list[tuple[str, exp.Expr]] = []
    for item in node.args.get("measures") or []:
        frame = item.args.get("window_frame")
        if frame and str(frame).upper() == "RUNNING":
            raise converter.error(item, "RUNNING measures are not supported: Flink computes MEASURES FINAL, once per "
                                        "match", UnsupportedSqlError)
        expr = item.this
        if not isinstance(expr, exp.Alias):
            raise converter.error(item, f"measure {expr.sql(dialect='spark')} needs a name: {expr.sql(dialect='spark')} "
                                        "AS name", SqlValidationError)
        if expr.alias in partition or expr.alias in [m[0] for m in measures]:
            raise converter.error(item, f"measure name {expr.alias!r} is taken by another column of the result",
                                  SqlValidationError)
        measures.append((expr.alias, expressions.measure(expr.this)))
    return measures


def _projected(converter, match: Match, measures: list[tuple[str, exp.Expr]], alias: str | None) -> Scope:
    """The result's columns over the Match node: the partition columns, then each measure."""
    inner = Scope.of(match, None, converter.position)
    types = {f.name: f.type for f in match.fields}
    exprs = [(p, quoted(p)) for p in match.partition]
    fields = [Field(p, types[p]) for p in match.partition]
    rowtime = None
    for name, expr in measures:
        column = inner.field_of(expr)
        exprs.append((name, quoted(column) if column else inner.sql(expr)))
        fields.append(Field(name, types[column] if column else infer_type(inner.rewrite(expr), types)))
        atom = next((a for a in match.atoms if a["name"] == column), None)
        if atom is not None and atom["rowtime"] and rowtime is None:
            rowtime, match.match_rowtime = name, atom["name"]
    calc = Calc(fields, match, exprs, keeps_rowtime=rowtime)
    entries = [Entry(alias, f.name, f.name) for f in fields]
    return Scope(calc, entries, converter.position)
