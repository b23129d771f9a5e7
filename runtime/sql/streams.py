"""DataStreams as tables: their columns, and their operators copied into a SQL job's environment."""
from __future__ import annotations

from runtime.jobgraph import EdgeSpec, OperatorSpec
from runtime.sql.catalog import Column
from runtime.sql.errors import SqlValidationError
from runtime.sql.types import arrow_to_spark

PRESERVING = ("watermark", "filter", "union", "sink")


def stream_columns(stream, schema: str | None) -> list[Column]:
    """The columns of ``stream``: from ``schema`` (DDL) or, through operators that keep columns, its source."""
    from runtime.ddl import arrow_schema

    if schema is not None:
        return [Column(f.name, arrow_to_spark(f.type)) for f in arrow_schema(schema)]
    op, env = stream.op, stream.env
    while op.kind in PRESERVING:
        source_id = next(e.source for e in env.edges if e.target == op.id)
        op = next(o for o in env.operators if o.id == source_id)
    found = _source_schema(op)
    if found is None:
        raise SqlValidationError(f"cannot tell the columns of {stream!r} (after '{op.name}'): pass them, e.g. "
                                 "from_data_stream(stream, 'user BIGINT, ts TIMESTAMP')")
    return [Column(f.name, arrow_to_spark(f.type)) for f in found]


def _source_schema(op: OperatorSpec):
    from runtime.ddl import arrow_schema

    if op.kind != "source":
        return None
    params = op.params
    if params.get("connector") == "collection":
        from runtime.arrow_ipc import table_from_b64

        return arrow_schema(params["schema"]) if params.get("schema") else table_from_b64(params["arrow_b64"]).schema
    if params.get("schema"):
        return arrow_schema(params["schema"])
    return None


def copy_into(stream, env):
    """A DataStream of ``env`` made of copies of ``stream``'s operators and everything upstream of them."""
    from runtime.api.datastream import DataStream

    source_env = stream.env
    if source_env is env:
        return stream
    needed, todo = [], [stream.op.id]
    while todo:
        op_id = todo.pop()
        if op_id in needed:
            continue
        needed.append(op_id)
        todo += [e.source for e in source_env.edges if e.target == op_id]
    known = {o.id for o in env.operators}
    for op in source_env.operators:
        if op.id in needed and op.id not in known:
            env.operators.append(OperatorSpec(op.id, op.name, op.kind, op.parallelism, dict(op.params), op.udf))
    for edge in source_env.edges:
        if edge.target in needed and not any(e.source == edge.source and e.target == edge.target for e in env.edges):
            env.edges.append(EdgeSpec(edge.source, edge.target, edge.partitioning, list(edge.keys)))
    env._counter = max(env._counter, source_env._counter)
    op = next(o for o in env.operators if o.id == stream.op.id)
    return DataStream(env, op, stream.timestamp_column)
