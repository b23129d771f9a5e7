"""The interface of sources and sinks: what a connector's reader and writer implement, and what they know.

A connector module holds, in one place, everything of one connector: the client-side builder that puts
its options into an operator's ``params`` (used by the DataStream API), its TaskManager-side reader
and/or writer, and its SQL table factory (runtime.connectors.table_options); it exports them as one
:class:`Connector`, which runtime.connectors.registry lists by name.

Writing your own:

* a source reader reads bounded offset ranges so a replay after failure reproduces its rows::

      class MyReader(SourceReader):
          def next_bundle(self, max_rows):   # blocking, runs in a worker thread
              ...return (spark DataFrame or None, rows read, finished: bool)
          def snapshot(self) -> dict: ...    # JSON-able offsets to resume from
          def restore(self, states): ...     # the snapshots of every old subtask (rescaling: take yours)

* a sink writer receives Arrow tables on the TaskManager's loop. An exactly-once sink stages what it
  gets between checkpoints and publishes it only when the checkpoint completes (two-phase commit)::

      class MyWriter(SinkWriter):
          async def write(self, table): ...           # stage (or, without checkpointing, publish)
          def prepare_commit(self, checkpoint_id):    # at the barrier: (JSON meta, Arrow table or None)
          def commit(self, checkpoint_id): ...        # publish what was staged up to this checkpoint
          def restore(self, states, checkpoint_id):   # re-publish what the restored checkpoint staged
          async def close(self): ...                  # end of input: publish the rest

A connector of the project is a ``Connector`` added to the registry's list; a job can also bring its
own class: ``env.from_source(MyReader, name, **options)`` and ``stream.sink_to(MyWriter, **options)``
ship it with the job (see :func:`python_connector_params`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol
from collections.abc import Callable

import pyarrow as pa

from runtime import errors

PYTHON_CONNECTOR = "python"  # a reader or writer class shipped with the job


class ConnectorError(errors.ConnectorError):
    """Connector options that do not work; the message names the operator and the option."""


@dataclass
class ConnectorContext:
    """What a reader or writer knows about where it runs."""
    operator_id: str
    operator_name: str
    subtask_index: int
    parallelism: int
    params: dict
    spark: Any  # runtime.taskmanager.spark.SparkRunner
    send: Callable[[Any], None]  # to the JobManager over the control channel
    job_id: str
    attempt_id: str
    runtime_mode: str
    run_blocking: Callable  # await ctx.run_blocking(fn, *args) on the task's executor
    checkpointing: bool = False  # stage output until checkpoints complete
    request: Callable[[Any], Any] | None = None  # blocking, from a worker thread: the JobManager's reply


class SourceReader:
    """What a source connector implements: bundles of rows from its split, its position to snapshot and restore."""
    bounded: bool = True
    # Seconds of unused rate a rate-limited source may catch up on after a stall (a slow first
    # Spark action, a long GC); None catches up on all of it, as sources whose rows are due by
    # wall-clock time must.
    max_burst_s: float | None = 1.0
    rate: float | None = None  # rows per second this subtask may read; None means no limit

    def __init__(self, ctx: ConnectorContext):
        self.ctx = ctx

    def next_bundle(self, max_rows: int):
        raise NotImplementedError

    def snapshot(self) -> dict:
        return {}

    def snapshot_state(self, checkpoint_id: int) -> dict:
        """The snapshot for checkpoint ``checkpoint_id`` (Flink's snapshotState): ``snapshot()`` unless the reader
        needs to know which checkpoint holds which position."""
        return self.snapshot()

    def notify_checkpoint_complete(self, checkpoint_id: int) -> None:
        """Checkpoint ``checkpoint_id`` completed (on the TaskManager's loop, between or during reads): what it
        holds may be acknowledged to the system read from (a replication slot's confirmed position)."""

    def restore(self, states: list[dict]) -> None:
        pass

    def close(self) -> None:
        """The task ends (finished, failed or cancelled): let go of connections; blocking, never during a read."""

    def rows_allowed_now(self, elapsed_s: float) -> int | None:
        """Rows the source may have produced by ``elapsed_s`` (rate limiting); None means no limit."""
        return None if self.rate is None else int(elapsed_s * self.rate)


class SinkWriter:
    """What a sink connector implements: write bundles, stage them for a checkpoint, commit or abort them."""
    def __init__(self, ctx: ConnectorContext):
        self.ctx = ctx

    async def write(self, table: pa.Table) -> None:
        raise NotImplementedError

    def prepare_commit(self, checkpoint_id: int) -> tuple[dict, pa.Table | None]:
        return {}, None

    def commit(self, checkpoint_id: int) -> None:
        pass

    def notify_checkpoint_complete(self, checkpoint_id: int) -> None:
        """Checkpoint ``checkpoint_id`` completed (on the TaskManager's loop): publish what it staged."""
        self.commit(checkpoint_id)

    def abort(self, checkpoint_id: int) -> None:
        pass

    def restore(self, states: list[tuple[int, dict, pa.Table | None]], checkpoint_id: int | None) -> None:
        pass

    async def close(self) -> None:
        pass


class LookupFunction(Protocol):
    """What a connector offers a lookup join: the table's rows for a batch of keys (blocking, on the task's
    thread), in the table's ``schema``."""
    schema: pa.Schema

    def lookup(self, keys: pa.Table) -> pa.Table: ...


@dataclass(frozen=True)
class Connector:
    """One connector as the registry (runtime.connectors.registry) knows it: the name operators give in
    ``params["connector"]``, its TaskManager-side reader and/or writer, and its SQL table factory
    (runtime.connectors.table_options.TableFactory) when tables can use it, and what a lookup join asks of it."""
    name: str
    reader: type[SourceReader] | None = None
    writer: type[SinkWriter] | None = None
    table: Any = None
    lookup: Callable[[dict, list[str]], LookupFunction] | None = None  # (params, key columns) -> LookupFunction


def python_connector_params(cls: type, base: type, **options) -> dict:
    """Client side: a user-written reader or writer class travels inside the job graph (cloudpickle),
    so the TaskManagers need not import the user's module; ``options`` reach it as ``ctx.params``."""
    if not (isinstance(cls, type) and issubclass(cls, base)):
        raise ConnectorError(f"expected a subclass of {base.__name__}, got {cls!r}")
    from runtime.jobgraph import pack_udf

    return {"connector": PYTHON_CONNECTOR, "class": pack_udf(cls), "class_name": cls.__qualname__, **options}


def connector_options(params: dict | type, base: type, example: str, **options) -> tuple[dict, str]:
    """Client side: connector options as given, or a user class shipped with the job; with the label
    its operator is named after. TypeError names what was expected."""
    if isinstance(params, type):
        params = python_connector_params(params, base, **options)
        return params, params["class_name"]
    if not isinstance(params, dict) or "connector" not in params:
        raise TypeError(f"expected connector options with a 'connector' key, e.g. {example}, "
                        f"or a {base.__name__} subclass; got {params!r}")
    return dict(params), params["connector"]
