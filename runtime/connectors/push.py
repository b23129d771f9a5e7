"""push: a source that a notebook or any REST client feeds with rows while the job runs.

::

    stream = env.push_source("user BIGINT, url STRING, ts TIMESTAMP", name="clicks in")
    job = env.execute_async("clicks")
    job.push("clicks in", rows)          # a pandas DataFrame, a pyarrow Table or a list of dicts
    job.close_source("clicks in")        # no more input: a bounded job can FINISH

Rows are checked against the schema when they are pushed (missing, unknown or ill-typed columns are
refused whole, naming the source and the field) and appended to a log the job's JobMaster keeps
(runtime.jobmanager.push): every row gets the next offset. Source subtask ``i`` of ``p`` owns the
offsets ``o`` with ``o % p == i`` and asks the JobManager for them over its control connection
(FetchPushedRows). Its position in the log is what it checkpoints, so after a failure it reads again
from the restored position and, with the collect or Parquet sink's two-phase commit, every pushed row
reaches the output exactly once. A subtask with nothing new returns no rows and the task idles.

The log lives in the JobMaster's memory: a job started from a savepoint has a new, empty log (its
``epoch`` differs, so restored positions start again at 0), and a JobManager that dies takes the
rows with it.

The schema is Spark DDL, read into Arrow by runtime.ddl (the JobManager and the client have no
Spark). Values may be pushed as any type that converts without loss: INT into BIGINT, integers into
DOUBLE or DECIMAL, ISO text into TIMESTAMP, DATE and DECIMAL, a nested value into the same kind of
nested type.
"""
from __future__ import annotations

import pyarrow as pa

from runtime.arrow_ipc import table_from_b64
from runtime.connectors.base import Connector, ConnectorError, SourceReader
from runtime.ddl import DDLError, arrow_schema
from runtime.messages import FetchPushedRows

T = pa.types


class PushError(ConnectorError):
    """Pushed rows that do not fit the source's schema; the message names the source and the field."""


def push_params(schema: str, name: str) -> dict:
    """Client side: check the schema parses, and package the options of a push source."""
    push_schema(schema, name)
    return {"connector": "push", "schema": schema}


def push_schema(ddl: str, source_name: str) -> pa.Schema:
    """The Arrow schema rows pushed into ``source_name`` must fit; ConnectorError if ``ddl`` does not parse."""
    try:
        return arrow_schema(ddl)
    except DDLError as err:
        raise ConnectorError(f"push source {source_name!r}: {err}") from None


# -- pushed rows -> a table that fits the schema -----------------------------------------------
def table_of(rows, source_name: str, schema: pa.Schema | None = None) -> pa.Table:
    """A pandas DataFrame, a pyarrow Table or a list of dicts as an Arrow table, as given (not yet checked
    against ``schema``, which only makes errors more precise)."""
    if isinstance(rows, pa.Table):
        return rows
    if type(rows).__name__ == "DataFrame" and hasattr(rows, "to_records"):
        try:
            return pa.Table.from_pandas(rows, preserve_index=False)
        except (pa.ArrowInvalid, pa.ArrowTypeError) as err:  # the message names the column
            raise PushError(f"push to source {source_name!r}: {_first_line(err)}") from None
    if isinstance(rows, (list, tuple)):
        return table_from_rows(list(rows), source_name, schema)
    raise PushError(f"push to source {source_name!r}: rows must be a pandas DataFrame, a pyarrow Table or a "
                    f"list of dicts, got {type(rows).__name__}")


def table_from_rows(rows: list, source_name: str, schema: pa.Schema | None = None) -> pa.Table:
    """A list of dicts as a table, one column per key; every row must name the same fields."""
    if not all(isinstance(row, dict) for row in rows):
        raise PushError(f"push to source {source_name!r}: every row must be an object (a dict) of field values")
    keys = list(rows[0]) if rows else []
    for i, row in enumerate(rows):
        if set(row) != set(keys):
            raise PushError(f"push to source {source_name!r}: row {i} has fields {sorted(row)}, "
                            f"row 0 has {sorted(keys)}")
    columns = {}
    for key in keys:
        try:
            columns[key] = pa.array([row[key] for row in rows])
        except (pa.ArrowInvalid, pa.ArrowTypeError) as err:
            wanted = f"must be {schema.field(key).type}; " if schema is not None and key in schema.names else ""
            raise PushError(f"push to source {source_name!r}: field {key!r} {wanted}its values are of mixed or "
                            f"unsupported types: {_first_line(err)}") from None
    return pa.table(columns)


def conform(table: pa.Table, schema: pa.Schema, source_name: str) -> pa.Table:
    """``table`` with the schema's columns, order and types; PushError if a column is missing, unknown,
    of a type that does not convert to the field's, or holds a value that does not fit it."""
    given = table.column_names
    if not given and not table.num_rows:  # an empty list of rows: nothing to check
        return schema.empty_table()
    missing = [name for name in schema.names if name not in given]
    unknown = [name for name in given if name not in schema.names]
    if missing or unknown or len(set(given)) != len(given):
        problems = ([f"missing {missing}"] if missing else []) + ([f"unknown {unknown}"] if unknown else [])
        raise PushError(f"push to source {source_name!r}: columns {given} do not match the schema "
                        f"{schema.names} ({', '.join(problems) or 'duplicate columns'})")
    return pa.table([_column(table.column(f.name), f, source_name) for f in schema], schema=schema)


def _column(values: pa.ChunkedArray, field: pa.Field, source_name: str) -> pa.ChunkedArray:
    where = f"push to source {source_name!r}: field {field.name!r}"
    if T.is_dictionary(values.type):
        values = values.cast(values.type.value_type)
    if not field.nullable and values.null_count:
        raise PushError(f"{where} is NOT NULL but {values.null_count} of the rows have no value")
    if values.type == field.type:
        return values
    if not _convertible(values.type, field.type):
        raise PushError(f"{where} must be {field.type}, got {values.type}")
    try:
        return _cast(values, field.type)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as err:
        raise PushError(f"{where} ({field.type}) does not take these values: {_first_line(err)}") from None


def _is_text(t: pa.DataType) -> bool:
    return T.is_string(t) or T.is_large_string(t)


def _convertible(src: pa.DataType, dst: pa.DataType) -> bool:
    """Whether values of ``src`` may go into a ``dst`` field (the cast itself still checks each value)."""
    if T.is_null(src):
        return True
    if T.is_integer(dst):
        return T.is_integer(src)
    if T.is_floating(dst):
        return T.is_integer(src) or T.is_floating(src)
    if T.is_decimal(dst):
        return T.is_integer(src) or T.is_floating(src) or T.is_decimal(src) or _is_text(src)
    if T.is_timestamp(dst):
        return T.is_timestamp(src) or _is_text(src)
    if T.is_date(dst):
        return T.is_date(src) or _is_text(src)
    if T.is_string(dst):
        return _is_text(src)
    if T.is_binary(dst):
        return T.is_binary(src) or T.is_large_binary(src)
    if T.is_nested(dst):  # the cast checks the items
        return any(kind(src) and kind(dst) for kind in (T.is_list, T.is_large_list, T.is_map, T.is_struct))
    return src == dst


def _cast(values: pa.ChunkedArray, dst: pa.DataType) -> pa.ChunkedArray:
    """A safe cast; integers reach decimals through DECIMAL(38, 0), and text without a zone offset
    reaches a UTC timestamp through a naive one (read as UTC)."""
    if T.is_decimal(dst) and T.is_integer(values.type):
        values = values.cast(pa.decimal128(38, 0))
    if T.is_timestamp(dst) and dst.tz and _is_text(values.type):
        try:
            return values.cast(dst)
        except pa.ArrowInvalid:
            values = values.cast(pa.timestamp(dst.unit))
    return values.cast(dst)


def _first_line(err: BaseException) -> str:
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__


# -- TaskManager side ---------------------------------------------------------------------------
class PushReader(SourceReader):
    """Reads this subtask's share of the push log from the JobManager, from the position it reached."""

    def __init__(self, ctx):
        super().__init__(ctx)
        self.epoch = ""  # which log ``position`` counts in; "" until the JobManager first answers
        self.position = 0  # every offset below this that belongs to this subtask has been read

    def next_bundle(self, max_rows: int):
        """Blocking (a worker thread): one round trip to the JobManager; no rows while nothing is new."""
        ctx = self.ctx
        request = ctx.request
        if request is None:
            raise RuntimeError("a push source runs only on a TaskManager (it asks the JobManager for rows)")
        reply = request(FetchPushedRows(ctx.job_id, 0, ctx.operator_id, ctx.subtask_index, ctx.parallelism,
                                        self.epoch, self.position, max(1, max_rows)))
        if reply.error:
            raise ConnectorError(f"source '{ctx.operator_name}': {reply.error}")
        self.epoch, self.position = reply.epoch, reply.position
        if not reply.rows:
            return None, 0, reply.finished
        return ctx.spark.from_arrow(table_from_b64(reply.arrow_b64)), reply.rows, reply.finished

    def snapshot(self) -> dict:
        return {"subtask": self.ctx.subtask_index, "parallelism": self.ctx.parallelism,
                "epoch": self.epoch, "position": self.position}

    def restore(self, states: list[dict]) -> None:
        """Take this subtask's position; a snapshot of another parallelism can only come from another
        job (a savepoint), whose log this job does not have, so it starts at the beginning."""
        for state in states:
            if state.get("subtask") == self.ctx.subtask_index and state.get("parallelism") == self.ctx.parallelism:
                self.epoch, self.position = str(state.get("epoch", "")), int(state.get("position", 0))
                return


CONNECTOR = Connector("push", reader=PushReader)
