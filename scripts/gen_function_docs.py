"""Write docs/sql-functions.md from the function registry: what of Flink's built-in functions runs, and how.

    python scripts/gen_function_docs.py           rewrite docs/sql-functions.md
    python scripts/gen_function_docs.py --check   fail (make lint) when it is out of date

One table per category of Flink's "System (Built-in) Functions" page, a row per function or operator:
how Flink writes it, whether Flinkbench runs it, how it runs on Spark (or why not) and its result type.
"""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from runtime.sql.builtins import registry  # noqa: E402
from runtime.sql.function_defs import CATEGORIES  # noqa: E402

TARGET = ROOT / "docs" / "sql-functions.md"


def render() -> str:
    """The whole page, from the registry."""
    functions = registry().functions
    supported = sum(f.supported for f in functions)
    lines = ["# Flink SQL built-in functions in Flinkbench", "",
             "Generated from the function registry (`runtime/sql/builtins/`, the functions by category, each described",
             "as `runtime/sql/function_defs.py` says) by `scripts/gen_function_docs.py`; `make lint` checks it is current.",
             "A function the table says is not supported is refused when a statement is planned, naming it.",
             "The supported ones are checked against Apache Flink 2.3 by `tests/integration/test_sql_function_registry.py`.",
             "", f"{supported} of {len(functions)} functions and operators are supported.", ""]
    for name in CATEGORIES:
        found = [f for f in functions if f.category == name]
        lines += [f"## {name[0].upper()}{name[1:]} ({sum(f.supported for f in found)} of {len(found)})", "",
                  "| function | supported | how it runs on Spark | result |", "|---|---|---|---|"]
        lines += [f"| `{_cell(f.syntax)}` | {'yes' if f.supported else 'no'} | {_cell(f.how())} | "
                  f"{_cell(_result(f.result))} |" for f in found]
        lines.append("")
    return "\n".join(lines)


def _result(rule: str) -> str:
    return {"-": "by its arguments", "arg0": "the argument's type", "arg2": "the third argument's type"}.get(rule, rule)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def main(argv: list[str]) -> int:
    text = render()
    if "--check" in argv:
        if not TARGET.exists() or TARGET.read_text() != text:
            print(f"{TARGET.relative_to(ROOT)} is out of date: run python scripts/gen_function_docs.py")
            return 1
        return 0
    TARGET.parent.mkdir(exist_ok=True)
    TARGET.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
