"""The ``%flink`` subcommands, one module per area; each registers itself with :func:`subcommand`.

A subcommand is ``fn(session, argstring)`` carrying IPython ``magic_arguments`` (so it parses its
own options and ``%flink help NAME`` prints its usage). Importing this package registers them all.
"""
from __future__ import annotations

import re
from collections.abc import Callable

SUBCOMMANDS: dict[str, Callable] = {}


def subcommand(name: str) -> Callable:
    def register(fn: Callable) -> Callable:
        if name in SUBCOMMANDS:
            raise ValueError(f"two %flink subcommands named {name!r}")
        fn.subcommand_name = name
        SUBCOMMANDS[name] = fn
        return fn
    return register


def summary(fn: Callable) -> str:
    """The first line of a subcommand's description (magic_arguments puts '::' and the usage first)."""
    for paragraph in re.split(r"\n\s*\n", fn.__doc__ or ""):
        text = paragraph.strip()
        if text and not text.startswith(("::", "%")):
            return text.splitlines()[0]
    return ""


def load_all() -> dict[str, Callable]:
    from kernel_magics.commands import cluster, faults, jobs, sql, views  # noqa: F401 - registration

    return SUBCOMMANDS
