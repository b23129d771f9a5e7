"""Fail when a module runs past 400 lines or a function past 50: sizes that fit in a reader's head.

    python scripts/check_sizes.py [paths...]     (default: runtime kernel_magics extension/src)

Python functions are measured from their ``def`` (decorators excluded) to their last line, docstring
included; TypeScript modules by line count (ESLint's max-lines-per-function measures their functions).
The allowance list below names today's offenders, each with the size it may not grow past; it only
shrinks. An entry that is no longer needed is reported too, so the list cannot go stale.
"""
from __future__ import annotations

import ast
import sys
from pathlib import Path

MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 50
DEFAULT_ROOTS = ("runtime", "kernel_magics", "extension/src")
SUFFIXES = {".py", ".ts", ".tsx"}

# "path" for a module, "path::Qualified.name" for a function, mapped to the lines it may have today.
ALLOWED: dict[str, int] = {}


def _functions(tree: ast.AST, prefix: str = ""):
    """Yield (qualified name, lines) for every function and method, nested ones included."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            name = f"{prefix}{node.name}"
            yield name, node.end_lineno - node.lineno + 1
            yield from _functions(node, name + ".")
        elif isinstance(node, ast.ClassDef):
            yield from _functions(node, f"{prefix}{node.name}.")


def measure(path: Path) -> dict[str, int]:
    """Every size of ``path`` that is over its limit, keyed like ALLOWED."""
    text = path.read_text(encoding="utf-8")
    over: dict[str, int] = {}
    lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    if lines > MAX_MODULE_LINES:
        over[str(path)] = lines
    if path.suffix == ".py":
        for name, size in _functions(ast.parse(text, str(path))):
            if size > MAX_FUNCTION_LINES:
                over[f"{path}::{name}"] = size
    return over


def main(argv: list[str]) -> int:
    roots = [Path(p) for p in (argv or DEFAULT_ROOTS)]
    files = sorted(f for r in roots for f in ([r] if r.is_file() else r.rglob("*")) if f.suffix in SUFFIXES)
    over: dict[str, int] = {}
    for f in files:
        over.update(measure(f))
    problems = []
    for key, size in sorted(over.items()):
        limit = MAX_FUNCTION_LINES if "::" in key else MAX_MODULE_LINES
        if key not in ALLOWED:
            problems.append(f"{key}: {size} lines (limit {limit})")
        elif size > ALLOWED[key]:
            problems.append(f"{key}: grew to {size} lines (allowed {ALLOWED[key]} while it is being split)")
    checked = {str(f) for f in files}
    for key in sorted(set(ALLOWED) - set(over)):
        if key.split("::")[0] in checked:
            problems.append(f"{key}: within the limit now; remove it from ALLOWED in {__file__}")
    for p in problems:
        print(p)
    print(f"check_sizes: {len(files)} files, {len(over)} over the limits, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
