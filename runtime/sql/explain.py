"""EXPLAIN with Flink's sections: the statement as parsed, the optimized plan, and how it executes.

``== Abstract Syntax Tree ==`` is the statement as the parser read it; ``== Optimized Physical Plan ==`` the plan
of relational nodes each sink runs (with ``EXPLAIN CHANGELOG_MODE``, what each node emits: ``[I]`` inserts only,
``[I,UB,UA,D]`` a changelog); ``== Optimized Execution Plan ==`` the JobGraph and ExecutionGraph the runtime
deploys (chained tasks, exchanges, parallelism). ESTIMATED_COST, PLAN_ADVICE and JSON_EXECUTION_PLAN are
refused by name: there is no cost model, no advisor and no JSON plan here.
"""
from __future__ import annotations

from runtime.sql.errors import UnsupportedSqlError
from runtime.sql.logical import Node

DETAILS = ("CHANGELOG_MODE",)


def explain(sinks: list[Node], env, statement, details: list[str] | None = None) -> str:
    """EXPLAIN's text for the plans of ``sinks`` (one per INSERT of a statement set) translated into ``env``."""
    unknown = [d for d in details or [] if d not in DETAILS]
    if unknown:
        raise UnsupportedSqlError(f"EXPLAIN {unknown[0]} is not supported (EXPLAIN [CHANGELOG_MODE] statement)")
    changelog = "CHANGELOG_MODE" in (details or [])
    lines = ["== Abstract Syntax Tree =="]
    for parsed in statement.inner or [statement]:
        lines.append(parsed.ast.sql(dialect="spark", pretty=True) if parsed.ast is not None else parsed.text)
    lines += ["", "== Optimized Physical Plan =="]
    for sink in sinks:
        lines += plan_tree(sink, changelog)
    lines += ["", "== Optimized Execution Plan ==", env.explain("sql")]
    return "\n".join(lines)


def plan_tree(node: Node, changelog: bool = False, depth: int = 0) -> list[str]:
    """The plan under ``node`` as indented lines, Flink's EXPLAIN style."""
    mode = f", changelogMode=[{'I,UB,UA,D' if node.updating else 'I'}]" if changelog else ""
    text = node.describe()
    line = text[:-1] + mode + ")" if mode and text.endswith(")") else text + mode
    lines = [("   " * depth) + ("+- " if depth else "") + line]
    for child in node.inputs:
        lines += plan_tree(child, changelog, depth + 1)
    return lines
