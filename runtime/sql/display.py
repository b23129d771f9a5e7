"""Results as the SQL client shows them: a tableau (bordered text table), with the changelog's kinds or
without; the materialised table is runtime.changelog.materialize."""
from __future__ import annotations

from typing import Any


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


def _text(value: Any) -> str:
    if value is None:
        return "<NULL>"
    if hasattr(value, "isoformat") and hasattr(value, "hour"):
        return value.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]
    return str(value)
