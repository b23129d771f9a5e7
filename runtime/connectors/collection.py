"""collection: a bounded in-memory source, the rows travelling inside the job graph (Arrow IPC).

Subtask ``i`` of ``p`` reads rows ``i, i+p, ...`` in order, ``bundle_rows`` at a time (each bundle is one
Spark plan, so small bundles let tests control exactly when watermarks advance). Its snapshot is
the position reached, so a replay resumes exactly.
"""
from __future__ import annotations


import pyarrow as pa

from runtime.arrow_ipc import table_from_b64, table_to_b64
from runtime.connectors.base import Connector, ConnectorError, SourceReader


def collection_params(rows, schema: str | None = None, bundle_rows: int | None = None) -> dict:
    """Client side: rows as a list of dicts, a pandas DataFrame or an Arrow table."""
    table = _as_table(rows)
    params = {"connector": "collection", "arrow_b64": table_to_b64(table)}
    if schema:
        params["schema"] = schema
    if bundle_rows is not None:
        if not isinstance(bundle_rows, int) or bundle_rows < 1:
            raise ConnectorError(f"bundle_rows must be a positive integer, got {bundle_rows!r}")
        params["bundle_rows"] = bundle_rows
    return params


def _as_table(rows) -> pa.Table:
    if isinstance(rows, pa.Table):
        return rows
    if type(rows).__name__ == "DataFrame":
        return pa.Table.from_pandas(rows, preserve_index=False)
    if isinstance(rows, (list, tuple)) and all(isinstance(r, dict) for r in rows):
        if not rows:
            raise ConnectorError("from_collection needs at least one row (or a table with a schema)")
        return pa.Table.from_pylist(list(rows))
    raise ConnectorError("from_collection takes a list of dicts, a pandas DataFrame or an Arrow table")


class CollectionReader(SourceReader):
    def __init__(self, ctx):
        super().__init__(ctx)
        table = table_from_b64(ctx.params["arrow_b64"])
        p, i = ctx.parallelism, ctx.subtask_index
        self.rows = table.take(pa.array(range(i, table.num_rows, p), pa.int64()))  # typed: it may be empty
        self.bundle_rows = int(ctx.params.get("bundle_rows") or 0)
        self.schema = ctx.params.get("schema")
        self.position = 0

    def next_bundle(self, max_rows: int):
        limit = min(max_rows, self.bundle_rows) if self.bundle_rows else max_rows
        piece = self.rows.slice(self.position, limit)
        self.position += piece.num_rows
        finished = self.position >= self.rows.num_rows
        if piece.num_rows == 0:
            return None, 0, finished
        df = self.ctx.spark.from_arrow(piece)
        if self.schema:
            df = df.selectExpr(*[f"CAST(`{f.name}` AS {f.dataType.simpleString()}) AS `{f.name}`"
                                 for f in self.ctx.spark.parse_schema(self.schema).fields])
        return df, piece.num_rows, finished

    def snapshot(self) -> dict:
        return {"subtask": self.ctx.subtask_index, "parallelism": self.ctx.parallelism, "position": self.position}

    def restore(self, states: list[dict]) -> None:
        for state in states:
            if state.get("subtask") == self.ctx.subtask_index and state.get("parallelism") == self.ctx.parallelism:
                self.position = int(state["position"])
                return
        if states:
            raise ConnectorError(f"source '{self.ctx.operator_name}': a collection source resumes only at the "
                                 "parallelism it was snapshotted with")


CONNECTOR = Connector("collection", reader=CollectionReader)
