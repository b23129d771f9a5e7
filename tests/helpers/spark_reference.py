"""Reference answers computed by a plain Spark batch query, to check streaming jobs against.

The clicks answer itself ships with the examples (runtime/examples/clicks_reference.py), since ``make demo``
checks against it too; this module gives the tests their short names and the exactness assertion.
"""
from __future__ import annotations

import pyarrow as pa

from runtime.examples.clicks_reference import comparable as clicks_rows
from runtime.examples.clicks_reference import expected as clicks_expected

__all__ = ["assert_clicks_exact", "clicks_expected", "clicks_rows"]


def assert_clicks_exact(spark, got: pa.Table, rows: int, **options) -> None:
    """``got`` is exactly what the clicks job over ``rows`` generated rows must give: nothing lost or repeated."""
    expected = clicks_expected(spark, rows, **options)
    assert got.num_rows == expected.num_rows > 0, f"{got.num_rows} windows, Spark's answer has {expected.num_rows}"
    assert clicks_rows(got) == clicks_rows(expected), "nothing lost, nothing duplicated"
