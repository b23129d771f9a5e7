"""How a ``%flink`` subcommand declares itself: ``@subcommand("name")`` over ``fn(session, argstring)``
carrying IPython ``magic_arguments`` (so it parses its own options and ``%flink help NAME`` prints its
usage). The table of them all is kernel_magics.commands.SUBCOMMANDS.
"""
from __future__ import annotations

import re
from collections.abc import Callable


def subcommand(name: str) -> Callable:
    """Name a function as the ``%flink`` subcommand ``name``."""
    def named(fn: Callable) -> Callable:
        fn.subcommand_name = name  # type: ignore[attr-defined]
        return fn
    return named


def summary(fn: Callable) -> str:
    """The first line of a subcommand's description (magic_arguments puts '::' and the usage first)."""
    for paragraph in re.split(r"\n\s*\n", fn.__doc__ or ""):
        text = paragraph.strip()
        if text and not text.startswith(("::", "%")):
            return text.splitlines()[0]
    return ""
