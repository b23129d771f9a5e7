"""The postgres-cdc source: an initial snapshot of one table, then its inserts, updates and deletes as a changelog
(+I, -U/+U, -D), from a logical replication slot. One subtask reads it (the SQL planner hashes its rows by the
table's primary key right after, so each row's changes stay in order).

Start (no checkpoint, or one taken before the first rows): with ``scan.startup.mode = initial`` the slot is
created with an exported snapshot, the table read in that snapshot (one bundle, all +I) and the stream
started at the slot's consistent point: nothing between snapshot and stream is lost or seen twice. With
``latest-offset`` the stream starts at the slot's creation, without a snapshot. A slot of that name that
another process reads is refused; one nobody reads is taken over (dropped and made again), since a fresh
start does not resume from it.

The snapshot of the source is the slot and the LSN past the last transaction it emitted. A restored source
waits until no process reads the slot (the killed TaskManager's connection ends) and streams from that LSN.
The LSN is confirmed to PostgreSQL (the slot's confirmed position, which lets the server free WAL) only when
the checkpoint holding it completes, so a restart neither loses nor repeats a change.

Rows reach Spark as one Arrow table of text columns per bundle, cast there to the declared types.
"""
from __future__ import annotations

import threading

import pyarrow as pa

from runtime.changelog import INSERT, OP_COLUMN
from runtime.connectors.base import ConnectorError, SourceReader
from runtime.connectors.postgres import Endpoint, psycopg
from runtime.connectors.postgres_cdc import slots
from runtime.connectors.postgres_cdc.decoding import Change, decoder_for
from runtime.connectors.postgres_cdc.replication import ChangeStream, lsn_text

POLL_S = 0.2  # how long one bundle waits for transactions to arrive


def endpoint_of(params: dict) -> Endpoint:
    """Where the table's server is, from the source's params."""
    return Endpoint(params["hostname"], int(params["port"]), params["database"], params["user"], params["password"],
                    params["where"], "hostname")


def plugin_options(params: dict) -> str:
    """START_REPLICATION's options for the decoding plugin."""
    if params["plugin"] == "pgoutput":
        return f"proto_version '1', publication_names '\"{params['publication']}\"'"
    table = f"{params['schema_name']}.{params['table_name']}"
    return f"\"format-version\" '2', \"include-transaction\" 'true', \"add-tables\" '{table}'"


class PostgresCdcReader(SourceReader):
    """Reads one table's snapshot and changes; see the module's description."""
    bounded = False

    def __init__(self, ctx):
        super().__init__(ctx)
        if ctx.parallelism != 1:
            raise ConnectorError(f"source '{ctx.operator_name}': a postgres-cdc source reads with one subtask, this "
                                 f"one has {ctx.parallelism}: set_parallelism(1)")
        self.params = ctx.params
        self.endpoint = endpoint_of(ctx.params)
        self.stream: ChangeStream | None = None
        self.restored_lsn: int | None = None
        self.pending: dict[int, int] = {}  # checkpoint id -> the LSN its snapshot holds
        self.confirm_lsn = 0
        self._reading = threading.Lock()  # a read and close never overlap (a cancelled task closes mid-read)

    def snapshot(self) -> dict:
        if self.stream is None and self.restored_lsn is None:
            return {"slot": self.params["slot"], "phase": "start"}
        lsn = self.stream.position if self.stream is not None else self.restored_lsn
        return {"slot": self.params["slot"], "phase": "stream", "lsn": lsn_text(lsn)}

    def snapshot_state(self, checkpoint_id: int) -> dict:
        state = self.snapshot()
        if state["phase"] == "stream":
            self.pending[checkpoint_id] = self.stream.position if self.stream is not None else self.restored_lsn
        return state

    def notify_checkpoint_complete(self, checkpoint_id: int) -> None:
        """The LSN of this checkpoint (and earlier ones) may be confirmed: sent with the next read."""
        done = [cid for cid in self.pending if cid <= checkpoint_id]
        if done:
            self.confirm_lsn = max(self.confirm_lsn, *(self.pending.pop(cid) for cid in done))

    def restore(self, states: list[dict]) -> None:
        for state in states:
            if state.get("slot") not in (None, self.params["slot"]):
                raise ConnectorError(f"source '{self.ctx.operator_name}': the checkpoint read slot {state['slot']!r}, "
                                     f"this job names {self.params['slot']!r} (option 'slot.name')")
            if state.get("phase") == "stream":
                from runtime.connectors.postgres_cdc.replication import lsn_int

                self.restored_lsn = lsn_int(state["lsn"])

    def next_bundle(self, max_rows: int):
        """The snapshot (the first call of a fresh start), then the changes of the transactions that arrived."""
        with self._reading:
            return self._read(max_rows)

    def _read(self, max_rows: int):
        if self.stream is None:
            return self._start(max_rows)
        if self.confirm_lsn > self.stream.confirmed:
            self.stream.confirm(self.confirm_lsn)
        changes = self.stream.poll(max_rows, POLL_S)
        if not changes:
            return None, 0, False
        return self._frame(self._table(changes)), len(changes), False

    def _start(self, max_rows: int):
        pg, params = psycopg(), self.params
        with slots.session_connect(self.endpoint) as conn:
            slots.check_server(conn, self.endpoint, params["schema_name"], params["table_name"], params["columns"])
            if self.restored_lsn is not None:
                confirmed = slots.wait_until_free(conn, self.endpoint, params["slot"])
                if confirmed is not None and confirmed > self.restored_lsn:
                    raise ConnectorError(f"{params['where']}: replication slot {params['slot']!r} was confirmed up to "
                                         f"{lsn_text(confirmed)}, past this job's checkpoint "
                                         f"({lsn_text(self.restored_lsn)}): changes between would be lost")
                self.stream = self._open(self.restored_lsn)
                self.confirm_lsn = self.restored_lsn
                return None, 0, False
            slots.refuse_slot_in_use(conn, self.endpoint, params["slot"])
            if slots.slot_state(conn, params["slot"])[0]:
                slots.drop_slot(conn, params["slot"])
            if params["plugin"] == "pgoutput":
                slots.prepare_publication(conn, params["publication"], params["schema_name"], params["table_name"])
        replication = slots.session_connect(self.endpoint, replication="database")
        try:
            initial = params["startup"] == "initial"
            start, snapshot = slots.create_slot(replication, self.endpoint, params["slot"], params["plugin"], initial)
            rows = slots.read_snapshot(self.endpoint, snapshot, params["schema_name"], params["table_name"],
                                       params["columns"]) if initial else None
            self.stream = ChangeStream(replication, decoder_for(params["plugin"]), params["slot"], start,
                                       plugin_options(params), params["where"])
        except (pg.Error, ConnectorError):
            replication.close()
            raise
        if rows is None or rows.num_rows == 0:
            return None, 0, False
        rows = rows.append_column(OP_COLUMN, pa.array([INSERT] * rows.num_rows, pa.int8()))
        return self._frame(rows), rows.num_rows, False

    def _open(self, start: int) -> ChangeStream:
        replication = slots.session_connect(self.endpoint, replication="database")
        try:
            return ChangeStream(replication, decoder_for(self.params["plugin"]), self.params["slot"], start,
                                plugin_options(self.params), self.params["where"])
        except Exception:
            replication.close()
            raise

    def _table(self, changes: list[Change]) -> pa.Table:
        columns = {c: pa.array([ch.values.get(c) for ch in changes], pa.string()) for c in self.params["columns"]}
        columns[OP_COLUMN] = pa.array([ch.kind for ch in changes], pa.int8())
        return pa.table(columns)

    def _frame(self, table: pa.Table):
        """The text columns as a Spark DataFrame cast to the declared types (the changelog column kept)."""
        spark = self.ctx.spark
        df = spark.from_arrow(table)
        declared = spark.parse_schema(self.params["schema"])
        return df.select([df[f.name].cast(f.dataType).alias(f.name) for f in declared.fields] + [df[OP_COLUMN]])

    def close(self) -> None:
        """Let go of the replication connection (the slot stays for a restart)."""
        with self._reading:
            if self.stream is not None:
                self.stream.close()
                self.stream = None
