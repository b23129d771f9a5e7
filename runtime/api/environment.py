"""StreamExecutionEnvironment: where a job is assembled and from where it is submitted.

The environment holds the operators and edges the DataStream calls add, turns them into a
runtime.jobgraph.JobGraph, and submits it to a JobManager over REST: the one named when the
environment was made, or the one in FLINKBENCH_JOBMANAGER_URL (which LocalCluster, the CLI and the
notebook magics set).
"""
from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from runtime.api.datastream import DataStream
from runtime.chaining import describe_tasks
from runtime.client import RestClient
from runtime.job_client import JobClient
from runtime.codec import to_plain
from runtime.config import ConfigError, option, read_duration, render
from runtime.config_values import format_duration
from runtime.connectors.base import SourceReader, connector_options
from runtime.connectors.collection import collection_params
from runtime.connectors.datagen import datagen_params
from runtime.connectors.files import file_source_params
from runtime.connectors.push import push_params
from runtime import python_dependencies
from runtime.jobgraph import EdgeSpec, JobGraph, OperatorSpec


@dataclass
class ProgramContext:
    """What ``flinkbench run`` hands the program it runs (Flink's context environment): job settings
    from ``-p``/``-D`` that the program's own settings override, detached mode (``execute()`` returns
    once the job is submitted), the savepoint to start from (``-s``), and the jobs the program
    submitted, for the CLI to follow."""
    config: dict[str, str] = field(default_factory=dict)
    detached: bool = False
    restore_from: str | None = None
    on_submit: Callable[[JobClient], None] | None = None
    submitted: list[JobClient] = field(default_factory=list)


_program: ProgramContext | None = None


@contextlib.contextmanager
def program_context(context: ProgramContext) -> Iterator[ProgramContext]:
    """Every environment made inside the block runs under ``context``."""
    global _program
    previous, _program = _program, context
    try:
        yield context
    finally:
        _program = previous


class StreamExecutionEnvironment:
    """Where a job is built and from where it is submitted: sources, settings (parallelism, checkpointing,
    mode) and execute."""
    def __init__(self, client: RestClient | None = None, config: dict[str, Any] | None = None):
        self._client = client
        self.config: dict[str, str] = {}
        self._program = _program
        if _program is not None:
            config = {**_program.config, **(config or {})}
        self.operators: list[OperatorSpec] = []
        self.edges: list[EdgeSpec] = []
        self.pending_partitioning: dict[str, tuple[str, list[str]]] = {}
        self._counter = 0
        self.restore_from: str | None = _program.restore_from if _program else None  # flinkbench run -s
        self.last_job: JobClient | None = None
        self.statement: str | None = None  # the SQL text a job was planned from (runtime.sql)
        for key, value in (config or {}).items():
            self.set(key, value)

    @classmethod
    def get_execution_environment(cls, client: RestClient | None = None) -> StreamExecutionEnvironment:
        return cls(client)

    # -- settings -----------------------------------------------------------------------------
    def set(self, key: str, value: Any) -> StreamExecutionEnvironment:
        """Set a job-level config key (Flink's name); raises ConfigError for unknown keys or bad values."""
        self.config[key] = render(key, option(key).read(value))
        return self

    def set_parallelism(self, parallelism: int) -> StreamExecutionEnvironment:
        return self.set("parallelism.default", parallelism)

    def set_max_parallelism(self, max_parallelism: int) -> StreamExecutionEnvironment:
        return self.set("pipeline.max-parallelism", max_parallelism)

    def set_runtime_mode(self, mode: str) -> StreamExecutionEnvironment:
        return self.set("execution.runtime-mode", str(mode).lower())

    def enable_checkpointing(self, interval: Any) -> StreamExecutionEnvironment:
        """Checkpoint every ``interval``: milliseconds as a number (Flink's API) or a duration string."""
        seconds = read_duration("checkpoint interval", interval)
        if seconds <= 0:
            raise ConfigError("checkpoint interval must be positive")
        return self.set("execution.checkpointing.interval", format_duration(seconds))

    def from_savepoint(self, path: str, allow_non_restored_state: bool = False) -> StreamExecutionEnvironment:
        """Start from a savepoint or retained checkpoint. A start that would drop state no operator of the job
        claims is refused unless ``allow_non_restored_state`` (Flink's --allowNonRestoredState, its key
        execution.state-recovery.ignore-unclaimed-state)."""
        self.restore_from = path
        if allow_non_restored_state:
            self.set("execution.state-recovery.ignore-unclaimed-state", True)
        return self

    # -- Python dependencies (PyFlink's names; runtime.python_dependencies ships them) ---------
    def add_python_file(self, file_path: str) -> StreamExecutionEnvironment:
        """A Python file or folder on the Python path of the job's functions on every TaskManager."""
        return self._append(python_dependencies.FILES, os.path.abspath(file_path))

    def add_python_archive(self, archive_path: str, target_dir: str | None = None) -> StreamExecutionEnvironment:
        """A zip archive unpacked on every TaskManager into ``target_dir`` (default: the archive's file name),
        a folder of the job's working directory and Python path there."""
        item = os.path.abspath(archive_path) + (f"#{target_dir}" if target_dir else "")
        return self._append(python_dependencies.ARCHIVES, item)

    def set_python_requirements(self, requirements_file_path: str,
                                requirements_cached_dir: str | None = None) -> StreamExecutionEnvironment:
        """Packages pip installs for the job on every TaskManager (from ``requirements_cached_dir`` where given,
        else the package index); checked with pip when the job is submitted."""
        value = os.path.abspath(requirements_file_path)
        if requirements_cached_dir:
            value += f"#{os.path.abspath(requirements_cached_dir)}"
        return self.set(python_dependencies.REQUIREMENTS, value)

    def _append(self, key: str, item: str) -> StreamExecutionEnvironment:
        listed = [v for v in self.config.get(key, "").split(",") if v]
        return self.set(key, ",".join(listed + ([item] if item not in listed else [])))

    # -- sources ------------------------------------------------------------------------------
    def from_source(self, params: dict | type, name: str | None = None, **options) -> DataStream:
        """A stream from connector options (``datagen_params(...)``) or a user-written SourceReader class."""
        params, label = connector_options(params, SourceReader, "datagen_params(...)", **options)
        op = self.add_operator("source", name or f"Source: {label}", params, None)
        return DataStream(self, op)

    def datagen(self, schema: str, name: str = "Source: datagen", **options) -> DataStream:
        """A generated stream; see runtime.connectors.datagen for the options."""
        return self.from_source(datagen_params(schema, **options), name)

    def from_collection(self, rows, schema: str | None = None, bundle_rows: int | None = None,
                        name: str = "Source: collection") -> DataStream:
        """A bounded stream of ``rows`` (list of dicts, pandas DataFrame or Arrow table)."""
        return self.from_source(collection_params(rows, schema, bundle_rows), name)

    def push_source(self, schema: str, name: str = "Source: push") -> DataStream:
        """A stream of the rows pushed into the running job with ``job.push(name, rows)``; it ends when
        ``job.close_source(name)`` is called. See runtime.connectors.push."""
        if any(op.params.get("connector") == "push" and op.name == name for op in self.operators):
            raise ValueError(f"there is already a push source named {name!r}: give each a name of its own")
        return self.from_source(push_params(schema, name), name)

    def read_files(self, path: str, format: str, schema: str | None = None, monitor_interval: Any = None,
                   name: str | None = None, **options) -> DataStream:
        """CSV, JSON lines or Parquet files under ``path``; with ``monitor_interval`` (streaming mode) new
        files are picked up as they appear."""
        interval = read_duration("monitor_interval", monitor_interval) if monitor_interval is not None else None
        return self.from_source(file_source_params(path, format, schema, interval, **options),
                                name or f"Source: {format} files")

    # -- graph building (used by DataStream) --------------------------------------------------
    def add_operator(self, kind: str, name: str, params: dict, udf: str | None) -> OperatorSpec:
        self._counter += 1
        op = OperatorSpec(id=f"{kind}-{self._counter}", name=name, kind=kind, parallelism=None,
                          params=params, udf=udf)
        self.operators.append(op)
        return op

    def add_edge(self, source: OperatorSpec, target: OperatorSpec, partitioning: str | None, keys: list[str]):
        pending = self.pending_partitioning.pop(source.id, None)
        if pending:
            partitioning, keys = pending
        self.edges.append(EdgeSpec(source.id, target.id, partitioning or "", keys))

    def rename_operator(self, op: OperatorSpec, uid: str) -> None:
        if any(o.id == uid for o in self.operators if o is not op):
            raise ValueError(f"uid {uid!r} is used by another operator")
        for edge in self.edges:
            edge.source = uid if edge.source == op.id else edge.source
            edge.target = uid if edge.target == op.id else edge.target
        if op.id in self.pending_partitioning:
            self.pending_partitioning[uid] = self.pending_partitioning.pop(op.id)
        op.id = uid

    def job_graph(self, job_name: str) -> JobGraph:
        """The JobGraph for what has been built so far, with default parallelism and partitioning filled in."""
        default_p = int(self.config.get("parallelism.default", 1))
        ops = [OperatorSpec(o.id, o.name, o.kind, o.parallelism or default_p, dict(o.params), o.udf)
               for o in self.operators]
        by_id = {o.id: o for o in ops}
        for e in self.edges:  # a pre-aggregation runs beside its input, at its parallelism
            if by_id[e.target].params.get("follows_input"):
                by_id[e.target].parallelism = by_id[e.source].parallelism
        edges = []
        for e in self.edges:
            partitioning = e.partitioning or (
                "forward" if by_id[e.source].parallelism == by_id[e.target].parallelism else "rebalance")
            edges.append(EdgeSpec(e.source, e.target, partitioning, list(e.keys)))
        graph = JobGraph(job_name, ops, edges, dict(self.config), self.restore_from, self.statement,
                         python_dependencies.collect(self.config))
        graph.validate(default_p)
        return graph

    def explain(self, job_name: str = "job") -> str:
        graph = self.job_graph(job_name)
        lines = [f"JobGraph of '{job_name}':"]
        for op in graph.operators:
            ins = [f"{e.partitioning}{'(' + ','.join(e.keys) + ')' if e.keys else ''} from {e.source}"
                   for e in graph.inputs_of(op.id)]
            lines.append(f"  {op.id} [{op.kind}] {op.name!r} x{op.parallelism}" + (f" <- {'; '.join(ins)}" if ins else ""))
        return "\n".join(lines) + "\n" + describe_tasks(graph)

    # -- running ------------------------------------------------------------------------------
    @property
    def client(self) -> RestClient:
        if self._client is None:
            self._client = RestClient.from_environment()
        return self._client

    def execute_async(self, job_name: str = "Flinkbench Job") -> JobClient:
        graph = self.job_graph(job_name)
        python_dependencies.check_requirements(graph.python_dependencies)
        plain = to_plain(graph)
        plain.pop("type", None)
        self.last_job = self.client.submit(plain)
        if self._program is not None:
            self._program.submitted.append(self.last_job)
            if self._program.on_submit is not None:
                self._program.on_submit(self.last_job)
        return self.last_job

    def execute(self, job_name: str = "Flinkbench Job", timeout: float | None = None) -> JobClient:
        """Submit and wait for the job to end; raises JobFailed with the remote traceback on failure.
        Under ``flinkbench run --detached`` it returns as soon as the job is submitted."""
        job = self.execute_async(job_name)
        if self._program is None or not self._program.detached:
            job.wait(timeout)
        return job
