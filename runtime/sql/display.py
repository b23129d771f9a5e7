"""Results as the SQL client shows them: a tableau (bordered text table), a changelog, a materialised table."""
from __future__ import annotations

from typing import Any

from runtime.taskmanager import changelog


def tableau(columns: list[str], rows: list, changelog_kinds: bool = False, changelog: bool = False) -> str:
    """A bordered table; with ``changelog`` an ``op`` column first (+I/-U/+U/-D)."""
    show_op = changelog or changelog_kinds
    header = (["op"] if show_op else []) + list(columns)
    body = [([r.get_row_kind().short_string()] if show_op else []) + [_text(v) for v in r] for r in rows]
    widths = [max(len(h), *(len(b[i]) for b in body)) if body else len(h) for i, h in enumerate(header)]
    line = "+" + "+".join("-" * (w + 2) for w in widths) + "+"
    out = [line, "|" + "|".join(f" {h:>{w}} " for h, w in zip(header, widths)) + "|", line]
    out += ["|" + "|".join(f" {v:>{w}} " for v, w in zip(b, widths)) + "|" for b in body]
    out += [line, f"{len(body)} row{'s' if len(body) != 1 else ''} in set" if body else "Empty set"]
    return "\n".join(out)


def materialize(rows: list) -> list:
    """The table a changelog of Rows describes (+I/+U add, -U/-D remove), in first-seen order."""
    pairs = [(r.get_row_kind().value, tuple(r)) for r in rows]
    kept = changelog.apply(pairs)
    names = rows[0]._names if rows else []
    from runtime.api.table_result import Row

    return [Row(list(values), names) for values in kept]


def _text(value: Any) -> str:
    if value is None:
        return "<NULL>"
    if hasattr(value, "isoformat") and hasattr(value, "hour"):
        return value.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]
    return str(value)
