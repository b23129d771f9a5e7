"""EXPLAIN: the logical plan, the JobGraph and the ExecutionGraph of a statement, as Flink prints stages."""
from __future__ import annotations

from runtime.sql.logical import explain_tree


def explain(sinks, env, text: str) -> str:
    """EXPLAIN's text: the statement, the logical plan of each sink, then the JobGraph and ExecutionGraph."""
    lines = ["== Abstract Syntax Tree ==", " ".join(text.split()), "", "== Optimized Logical Plan =="]
    for sink in sinks:
        lines += explain_tree(sink)
    lines += ["", "== Physical Execution Plan =="]
    lines.append(env.explain("sql"))
    return "\n".join(lines)
