"""The Python that runs inside Spark's Python workers: the Arrow mappers around users' map and filter functions.

On a Spark cluster (``spark.master``) or a Spark Connect server (``spark.remote``) those workers run on
other machines, where flinkbench need not be installed. So this module imports nothing of flinkbench
and :func:`ship_by_value` has PySpark's cloudpickle send its functions by value, not as a reference to
a module the workers could not import; they need only pandas and pyarrow, as any PySpark Arrow UDF does.
"""
from __future__ import annotations

import sys
from collections.abc import Callable

import pyarrow as pa


def ship_by_value() -> None:
    """Pickle this module's functions by value in every plan this process sends to Spark."""
    from pyspark import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])


def as_arrow(result, names: list[str] | None) -> pa.Table:
    """What a user function returned, as Arrow; TypeError naming the problem if it is not a batch."""
    import pandas as pd

    if isinstance(result, pa.RecordBatch):
        result = pa.Table.from_batches([result])
    if isinstance(result, pd.Series):
        result = result.to_frame()
    if isinstance(result, pd.DataFrame):
        result = pa.Table.from_pandas(result, preserve_index=False)
    if not isinstance(result, pa.Table):
        raise TypeError(f"a map function must return a pandas DataFrame or an Arrow table, "
                        f"got {type(result).__name__}")
    if names is not None and result.column_names != names:
        raise TypeError(f"map function returned columns {result.column_names}, expected {names}")
    return result


def pandas_mapper(fn: Callable, names: list[str]):
    """mapInArrow body for a function of pandas DataFrames returning columns ``names``."""
    def run(batches):
        for batch in batches:
            out = as_arrow(fn(batch.to_pandas()), names)
            yield from out.to_batches()
    return run


def arrow_mapper(fn: Callable):
    """mapInArrow body for a function of Arrow tables."""
    def run(batches):
        for batch in batches:
            yield from as_arrow(fn(pa.Table.from_batches([batch])), None).to_batches()
    return run


def arrow_filter(fn: Callable):
    """mapInArrow body keeping the rows for which ``fn`` (pandas DataFrame -> boolean Series) is true."""
    def run(batches):
        import pandas as pd

        for batch in batches:
            frame = batch.to_pandas()
            mask = fn(frame)
            if not isinstance(mask, (pd.Series, list)) or len(mask) != len(frame):
                raise TypeError("a filter function must return a boolean Series as long as its input, "
                                f"got {type(mask).__name__}")
            kept = frame[pd.Series(mask, index=frame.index).astype(bool)]
            yield from pa.Table.from_pandas(kept, schema=batch.schema, preserve_index=False).to_batches()
    return run
