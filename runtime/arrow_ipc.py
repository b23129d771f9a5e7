"""Arrow IPC stream bytes: the one encoding of a table on data connections, in collect results and in
checkpoint storage."""
from __future__ import annotations

import base64
import io

import pyarrow as pa
import pyarrow.ipc as ipc


def table_to_ipc(table: pa.Table) -> bytes:
    """One Arrow IPC stream holding ``table``: how tables cross a process boundary."""
    sink = io.BytesIO()
    with ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue()


def table_from_ipc(data: bytes) -> pa.Table:
    """The table of one Arrow IPC stream (the inverse of table_to_ipc)."""
    return ipc.open_stream(data).read_all()


def table_to_b64(table: pa.Table) -> str:
    """For tables inside JSON (collect results, collection sources)."""
    return base64.b64encode(table_to_ipc(table)).decode("ascii")


def table_from_b64(data: str) -> pa.Table:
    """The table of a base64 Arrow IPC stream, as JSON messages carry tables."""
    return table_from_ipc(base64.b64decode(data))
