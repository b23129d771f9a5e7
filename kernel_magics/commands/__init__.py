"""The ``%flink`` subcommands, one module per area, gathered into one table: :data:`SUBCOMMANDS`.

Each module names its subcommands with ``@subcommand`` (kernel_magics.commands.subcommand); the table
takes them from the modules listed in MODULES, in that order, so the subcommand modules import only
what they use and none of them needs importing for its side effects.
"""
from __future__ import annotations

from collections.abc import Callable
from types import ModuleType

from kernel_magics.commands import (cluster, dependencies, drilldown, faults, jobs, recordings, savepoints, sql, users,
                                     views)
from kernel_magics.commands.subcommand import summary

__all__ = ["MODULES", "SUBCOMMANDS", "summary"]

MODULES: tuple[ModuleType, ...] = (cluster, dependencies, faults, jobs, savepoints, drilldown, sql, users, views,
                                   recordings)


def subcommands_of(modules: tuple[ModuleType, ...]) -> dict[str, Callable]:
    """Every function the modules define under ``@subcommand``, by name; ValueError if two share a name."""
    table: dict[str, Callable] = {}
    for module in modules:
        for fn in vars(module).values():
            name = getattr(fn, "subcommand_name", None)
            if name is None or getattr(fn, "__module__", None) != module.__name__:
                continue  # not a subcommand, or one imported from another module
            if name in table:
                raise ValueError(f"two %flink subcommands named {name!r}")
            table[name] = fn
    return table


SUBCOMMANDS = subcommands_of(MODULES)
