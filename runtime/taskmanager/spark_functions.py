"""The Python that runs inside Spark's Python workers: the Arrow mappers around users' map and filter functions.

On a Spark cluster (``spark.master``) or a Spark Connect server (``spark.remote``) those workers run on
other machines, where flinkbench need not be installed. So this module imports nothing of flinkbench
and :func:`ship_by_value` has PySpark's cloudpickle send its functions by value, not as a reference to
a module the workers could not import; they need only pandas and pyarrow, as any PySpark Arrow UDF does.
"""
from __future__ import annotations

import os
import sys
from collections.abc import Callable

import pyarrow as pa


def ship_by_value() -> None:
    """Pickle this module's functions by value in every plan this process sends to Spark."""
    from pyspark import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])


class Deferred:
    """A user function pickled on the TaskManager and loaded in a Spark worker only once the job's shipped folders
    (runtime.taskmanager.python_environment) are on the worker's path: code that imports a shipped module or an
    installed requirement cannot be unpickled before. ``worker_paths``: (archive alias, folder inside it) pairs
    Spark unpacked (SparkFiles); ``worker_cwd``: the alias the function runs in (where archives unpacked)."""

    def __init__(self, function, worker_paths: tuple, worker_cwd: str | None):
        from pyspark import cloudpickle

        self.blob = cloudpickle.dumps(function)
        self.worker_paths, self.worker_cwd = tuple(worker_paths), worker_cwd
        self._loaded = function  # on the TaskManager, which has the job's folders on its path already

    def load(self):
        """The function, loaded in this process (once; in a worker, after the job's folders are on its path)."""
        if self._loaded is None:
            from pyspark import SparkFiles, cloudpickle

            activate(tuple(os.path.normpath(os.path.join(SparkFiles.get(alias), folder))
                           for alias, folder in self.worker_paths))
            if self.worker_cwd:
                os.chdir(SparkFiles.get(self.worker_cwd))
            self._loaded = cloudpickle.loads(self.blob)
        return self._loaded

    def __call__(self, *args):
        return self.load()(*args)

    def __getstate__(self):
        return {"blob": self.blob, "worker_paths": self.worker_paths, "worker_cwd": self.worker_cwd}

    def __setstate__(self, state):
        self.__dict__.update(state, _loaded=None)


class Shipped:
    """A SQL function wrapper (runtime.udf) of a job that ships Python dependencies: its name and declared types
    travel as plain values, its code as a Deferred that loads when the function is opened in the worker."""

    def __init__(self, wrapper, worker_paths: tuple, worker_cwd: str | None):
        self.name, self.kind, self.func_type = wrapper.name, wrapper.kind, wrapper.func_type
        self.result_type, self.input_types = wrapper.result_type, wrapper.input_types
        self.code = Deferred(wrapper, worker_paths, worker_cwd)

    def opened(self, context=None):
        return self.code.load().opened(context)

    def __repr__(self) -> str:
        return f"<shipped {self.kind} function {self.name}>"


def activate(paths: tuple[str, ...]) -> None:
    """Put ``paths`` first on this process's Python path; a module of one of their names that an earlier job
    loaded from elsewhere is forgotten, so this job's functions load their own."""
    for path in reversed(paths):
        if path in sys.path:
            continue
        sys.path.insert(0, path)
        for name in _top_level_modules(path):
            module = sys.modules.get(name)
            where = getattr(module, "__file__", None) or ""
            if module is not None and not os.path.abspath(where).startswith(path + os.sep):
                for each in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
                    del sys.modules[each]


def _top_level_modules(path: str) -> list[str]:
    if not os.path.isdir(path):
        return []
    return [entry[:-3] if entry.endswith(".py") else entry for entry in os.listdir(path)
            if entry.endswith(".py") or (entry.isidentifier() and os.path.isdir(os.path.join(path, entry)))]


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
