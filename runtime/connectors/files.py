"""files: read CSV, JSON lines or Parquet from a directory; write Parquet, optionally partitioned.

Source: the files of ``path`` are shared among subtasks by a stable hash of their names; each bundle
reads one file through ``spark.read``. In batch mode (or without ``monitor_interval``) the directory
is listed once and the source finishes; in streaming mode with ``monitor_interval`` it is listed
again and new files are read as they appear. The snapshot is the set of files already read.

Sink: Parquet files under ``path`` (Hive-style ``key=value`` directories with ``partition_by``).
Without checkpointing each bundle becomes a file at once. With checkpointing the sink is
exactly-once: what arrives between two barriers is written to ``path/.staging/sub-<i>/`` at the
barrier and moved to its final name ``part-<subtask>-<checkpoint>-<n>.parquet`` only when that
checkpoint completes; a restored sink publishes what its checkpoint staged and deletes the rest.

As a SQL table (``'connector' = 'filesystem'``): ``path``, ``format`` = csv|json|parquet,
``source.monitor-interval`` (streaming reads watch the directory), partition columns from PARTITIONED BY;
format options (``csv.*``, ``json.*``, ``parquet.*``) are accepted as Flink's are.
"""
from __future__ import annotations

import os
import time
import uuid
import zlib

import pyarrow as pa

from runtime.config_values import parse_duration
from runtime.connectors import file_formats
from runtime.connectors.base import Connector, ConnectorError, SinkWriter, SourceReader
from runtime.connectors.table_options import ConfigOption, TableFactory, TableOptionError, TableSpec, physical_schema

FORMATS = ("csv", "json", "parquet")
STAGING = ".staging"


def file_source_params(path: str, format: str, schema: str | None = None, monitor_interval: float | None = None,
                       header: bool = True) -> dict:
    if format not in FORMATS:
        raise ConnectorError(f"file source format must be one of {list(FORMATS)}, got {format!r}")
    if format != "parquet" and not schema:
        raise ConnectorError(f"a {format} file source needs a schema, e.g. 'user INT, amount DOUBLE'")
    return {"connector": "files", "path": _local(path), "format": format, "schema": schema,
            "monitor_interval": monitor_interval, "header": header}


def file_sink_params(path: str, partition_by: list[str] | None = None) -> dict:
    return {"connector": "files", "path": _local(path), "format": "parquet", "partition_by": list(partition_by or [])}


def _local(path: str) -> str:
    return path[len("file://"):] if path.startswith("file://") else os.path.abspath(path)


class FileReader(SourceReader):
    def __init__(self, ctx):
        super().__init__(ctx)
        params = ctx.params
        self.path, self.format, self.schema = params["path"], params["format"], params.get("schema")
        monitor = params.get("monitor_interval")
        self.monitor = monitor if monitor and ctx.runtime_mode == "streaming" else None
        self.bounded = self.monitor is None
        self.done: set[str] = set()
        self._listed_at = 0.0
        self._todo: list[str] = []

    def _mine(self, name: str) -> bool:
        return zlib.crc32(name.encode()) % self.ctx.parallelism == self.ctx.subtask_index

    def _list(self) -> list[str]:
        if not os.path.exists(self.path):
            raise ConnectorError(f"file source '{self.ctx.operator_name}': {self.path} does not exist")
        names = file_formats.list_files(self.path, nested=bool(self.ctx.params.get("partition_columns")))
        return [n for n in names if self._mine(os.path.relpath(n, self.path)) and n not in self.done]

    def next_bundle(self, max_rows: int):
        now = time.monotonic()
        if not self._todo and (not self._listed_at or (self.monitor and now - self._listed_at >= self.monitor)):
            self._todo = self._list()
            self._listed_at = now
        if not self._todo:
            return None, 0, self.bounded
        name = self._todo.pop(0)
        df = self._read(name)
        self.done.add(name)
        finished = self.bounded and not self._todo
        return df, None, finished  # rows unknown until the bundle's one action: the task counts them

    def _read(self, name: str):
        reader = self.ctx.spark.session.read
        if self.schema:
            reader = reader.schema(self.schema)
        if self.format == "csv":
            reader = reader.option("header", str(bool(self.ctx.params.get("header", True))).lower())
        try:
            df = reader.format(self.format).load(name)
            return self._with_partitions(df, name)
        except Exception as err:  # noqa: BLE001 - Spark's analysis errors name the problem
            raise ConnectorError(f"file source '{self.ctx.operator_name}': cannot read {name}: "
                                 f"{str(err).splitlines()[0]}") from None

    def _with_partitions(self, df, name: str):
        """The file's rows plus the partition columns its folders name (``dt=2024-01-01/``)."""
        columns = self.ctx.params.get("partition_columns") or {}
        if not columns:
            return df
        from pyspark.sql import functions as F

        values = file_formats.partition_values(self.path, name)
        return df.withColumns({c: F.lit(values.get(c)).cast(t) for c, t in columns.items()})

    def snapshot(self) -> dict:
        return {"done": sorted(self.done)}

    def restore(self, states: list[dict]) -> None:
        for state in states:
            self.done.update(n for n in state.get("done", []) if self._mine(os.path.relpath(n, self.path)))


class ParquetWriter(SinkWriter):
    def __init__(self, ctx):
        super().__init__(ctx)
        self.path = ctx.params["path"]
        self.partition_by = ctx.params.get("partition_by") or []
        self.format = ctx.params.get("format", "parquet")  # csv and json too (SQL's filesystem tables)
        self.current: list[pa.Table] = []
        self.pending: dict[int, str] = {}  # checkpoint id -> staging directory (relative to path)
        self._direct = 0
        os.makedirs(self.path, exist_ok=True)

    @property
    def staging_root(self) -> str:
        return os.path.join(self.path, STAGING, f"sub-{self.ctx.subtask_index}")

    async def write(self, table) -> None:
        if self.ctx.checkpointing:
            self.current.append(table)
            return
        self._direct += 1
        await self.ctx.run_blocking(self._write_final, table, f"part-{self.ctx.subtask_index}-{uuid.uuid4().hex[:8]}")

    def _write_final(self, table: pa.Table, stem: str) -> None:
        self._write(table, self.path, stem)

    def _write(self, table: pa.Table, root: str, stem: str) -> None:
        missing = [c for c in self.partition_by if c not in table.column_names]
        if missing:
            raise ConnectorError(f"file sink '{self.ctx.operator_name}': no partition column {missing}")
        file_formats.write_partitioned(table, root, stem, self.format, self.partition_by)

    def prepare_commit(self, checkpoint_id: int):
        if self.current:
            staged = os.path.join(self.staging_root, f"chk-{checkpoint_id}")
            self._write(pa.concat_tables(self.current, promote_options="default"), staged, "data")
            self.pending[checkpoint_id] = os.path.relpath(staged, self.path)
        self.current = []
        return {"pending": {str(c): d for c, d in self.pending.items()}}, None

    def commit(self, checkpoint_id: int) -> None:
        for cid in sorted(c for c in self.pending if c <= checkpoint_id):
            self._publish(self.ctx.subtask_index, cid, self.pending.pop(cid))

    def _publish(self, subtask: int, checkpoint_id: int, staged_rel: str) -> None:
        """Move one staged checkpoint's files to their final names; safe to repeat."""
        staged = os.path.join(self.path, staged_rel)
        if not os.path.isdir(staged):
            return  # already published
        for n, (folder, _, files) in enumerate(sorted(os.walk(staged))):
            for k, name in enumerate(sorted(f for f in files if file_formats.is_data_file(f, self.format))):
                target_dir = os.path.join(self.path, os.path.relpath(folder, staged))
                os.makedirs(target_dir, exist_ok=True)
                os.replace(os.path.join(folder, name), os.path.join(
                    target_dir, f"part-{subtask}-{checkpoint_id}-{n}-{k}.{file_formats.EXTENSIONS[self.format]}"))
        _remove_tree(staged)

    def restore(self, states, checkpoint_id) -> None:
        """Publish what the restored checkpoint staged; what later attempts staged is discarded."""
        for old_subtask, meta, _ in states:
            for cid, staged in sorted(meta.get("pending", {}).items(), key=lambda kv: int(kv[0])):
                if checkpoint_id is None or int(cid) <= checkpoint_id:
                    self._publish(old_subtask, int(cid), staged)
            _remove_tree(os.path.join(self.path, STAGING, f"sub-{old_subtask}"))
        _remove_tree(self.staging_root)

    async def close(self) -> None:
        """End of input: publish everything, including rows after the last barrier."""
        self.commit(2**62)
        if self.current:
            table = pa.concat_tables(self.current, promote_options="default")
            self.current = []
            await self.ctx.run_blocking(self._write_final, table, f"part-{self.ctx.subtask_index}-final")
        _remove_tree(self.staging_root)


def _remove_tree(path: str) -> None:
    import shutil

    shutil.rmtree(path, ignore_errors=True)


PATH = ConfigOption("path", str, description="the directory of the table's files")
FORMAT = ConfigOption("format", FORMATS)
MONITOR_INTERVAL = ConfigOption("source.monitor-interval", parse_duration)
FILESYSTEM_OPTIONS = (ConfigOption("partition.default-name"), ConfigOption("sink.rolling-policy.file-size"),
                      ConfigOption("sink.rolling-policy.rollover-interval"))


class FilesystemTableFactory(TableFactory):
    """``'connector' = 'filesystem'``: a directory of CSV, JSON lines or Parquet files, read and written."""
    identifier = "filesystem"
    required = (PATH,)
    optional = (FORMAT, MONITOR_INTERVAL, *FILESYSTEM_OPTIONS)
    prefixes = ("csv.", "json.", "parquet.")

    def check(self, table: TableSpec) -> None:
        """Flink's options, and a format this connector reads and writes."""
        super().check(table)
        if table.options.get("format") not in FORMATS:
            raise TableOptionError(f"table {table.name!r}: 'format' must be one of {', '.join(FORMATS)}, "
                                   f"got {table.options.get('format')!r}")

    def source_params(self, table: TableSpec, runtime_mode: str) -> dict:
        """The files source; partition columns are read from the folder names, not the files."""
        partitions = {c.name: c.type for c in table.physical if c.name in table.partition_keys}
        interval = self.get(table, MONITOR_INTERVAL) if runtime_mode == "streaming" else None
        return {"connector": "files", "path": _local(table.options["path"]), "format": table.options["format"],
                "schema": physical_schema(table, leave_out=list(partitions)), "header": False,
                "partition_columns": partitions, "monitor_interval": interval}

    def sink_params(self, table: TableSpec) -> dict:
        return {"connector": "files", "path": _local(table.options["path"]), "format": table.options["format"],
                "partition_by": list(table.partition_keys)}


CONNECTOR = Connector("files", reader=FileReader, writer=ParquetWriter, table=FilesystemTableFactory())
