"""The conformance cases, one module per page (or function category) of Flink's SQL reference.

A module defines ``PAGE`` (its title in the report) and ``CASES``, a list of :class:`Case`; optionally
``TABLES`` (more tests.conformance.tables.Table) and ``VIEWS`` (CREATE VIEW statements) that its queries read.
Adding a case is one entry in its page's list; a new page is a new module here, found by :func:`pages`.
"""
from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass


@dataclass(frozen=True)
class Case:
    """One query, run as written by both engines in streaming mode; its final table is compared exactly."""
    name: str
    sql: str


@dataclass
class Page:
    title: str
    cases: list[Case]
    tables: list
    views: list[str]


def pages(only: str = "") -> list[Page]:
    """Every page module of this package, in name order (``only``: those of a comma-separated list of module
    names); case names must be unique across them."""
    found, names = [], set()
    wanted = {name.strip() for name in only.split(",") if name.strip()}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if wanted and info.name not in wanted:
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        page = Page(module.PAGE, list(module.CASES), list(getattr(module, "TABLES", [])),
                    list(getattr(module, "VIEWS", [])))
        for case in page.cases:
            if case.name in names:
                raise ValueError(f"conformance case {case.name!r} ({info.name}) is named twice")
            names.add(case.name)
        found.append(page)
    return found
