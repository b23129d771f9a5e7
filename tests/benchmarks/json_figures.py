"""A benchmark's figures out: printed as JSON, and written to a file for tests.benchmarks.report to read."""
from __future__ import annotations

import json
import os


def report(figures: dict, out: str | None) -> None:
    """Print the figures as JSON, and write them to ``out`` when given (its folder made if needed)."""
    print(json.dumps(figures, indent=2))
    if out:
        os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
        with open(out, "w") as fh:
            json.dump(figures, fh, indent=2)


def load(path: str) -> dict:
    """Figures written by :func:`report`; ValueError naming the file when it holds none."""
    try:
        with open(path) as fh:
            figures = json.load(fh)
    except json.JSONDecodeError as err:
        raise ValueError(f"{path} is not the JSON of a benchmark run: {err}") from None
    if not isinstance(figures, dict):
        raise ValueError(f"{path} is not the JSON of a benchmark run: an object expected")
    return figures
