"""The jdbc connector's sink: rows appended, or upserted and deleted by the table's key, exactly once.

Changes to write (runtime.connectors.jdbc.changes) are what arrived since the last write: with a key, one row
per key, the last change winning (+I/+U upsert, -D delete, -U skipped, as Flink's upsert sink does); without
one, the rows as they came. A write is one transaction: COPY into a temporary table, then DELETE and
``INSERT ... ON CONFLICT (key) DO UPDATE`` into the target (an append COPYs straight into it).

Without checkpointing, rows are written when ``sink.buffer-flush.max-rows`` have gathered or
``sink.buffer-flush.interval`` has passed since the last write (checked as rows arrive), and at the end.

With checkpointing the sink is exactly-once: what arrives between two barriers is staged in the
checkpoint (an Arrow table) and written only when that checkpoint completes. Each write also advances this
sink subtask's row in ``<schema>.flinkbench_sink_commits`` (sink = job and operator, subtask, checkpoint id)
in the same transaction, and is skipped when that row says the checkpoint is written already. A restored
sink writes again what its checkpoint staged; the row makes that idempotent, so TaskManager and JobManager
failures leave the table as one failure-free run would.

Writes run one after another on the TaskManager's pool (notify-checkpoint-complete comes on the loop); one
that fails after ``sink.max-retries`` retries of a lost connection fails the task at its next write or
barrier, and the job restarts from its last checkpoint.
"""
from __future__ import annotations

import asyncio
import time

import pyarrow as pa
import pyarrow.compute as pc

from runtime.connectors.base import SinkWriter
from runtime.connectors.jdbc.changes import DELETE_OP, OP, changes, concat
from runtime.connectors.postgres import (PostgresError, connect, copy_in, endpoint_from_jdbc_url, identifier,
                                         psycopg, server_words)

COMMITS_TABLE = "flinkbench_sink_commits"
FINAL = 2**62  # what a sink writes at the end of its input, after its last checkpoint
CHECKPOINT = "__checkpoint"


class JdbcSinkWriter(SinkWriter):
    """Writes into one PostgreSQL table; stages per checkpoint when the job checkpoints."""

    def __init__(self, ctx):
        super().__init__(ctx)
        params = ctx.params
        self.key: list[str] = list(params.get("key") or [])
        self.columns: list[str] | None = list(params["columns"]) if params.get("columns") else None  # None: all
        self.sink_id = f"{ctx.job_id}/{ctx.operator_id}"
        self.current: list[pa.Table] = []
        self.staged: dict[int, pa.Table | None] = {}  # checkpoint id -> its changes, until it completes
        self._last: asyncio.Task | None = None  # the latest queued write; each waits for the one before
        self._failure: BaseException | None = None
        self._flushed_at = time.monotonic()
        self._commits_table = False  # made sure of once, on the first exactly-once write

    async def write(self, table: pa.Table) -> None:
        self._raise_failure()
        self.current.append(table)
        if self.ctx.checkpointing:
            return
        rows = sum(t.num_rows for t in self.current)
        if rows >= self.ctx.params["max_rows"] or time.monotonic() - self._flushed_at >= self.ctx.params["interval_s"]:
            self._flushed_at = time.monotonic()
            self._enqueue(self.ctx.subtask_index, None, self._take_current())
            await self._drain()

    def _take_current(self) -> pa.Table | None:
        table, self.current = changes(self.current, self.key), []
        return table

    def prepare_commit(self, checkpoint_id: int):
        """At the barrier: this checkpoint's changes join the staged ones, all kept in the snapshot."""
        self._raise_failure()
        self.staged[checkpoint_id] = self._take_current()
        pending = [(cid, t) for cid, t in sorted(self.staged.items()) if t is not None]
        meta = {"job": str(self.ctx.job_id), "sink": self.sink_id, "staged": [cid for cid, _ in pending]}
        if not pending:
            return meta, None
        return meta, concat([t.append_column(CHECKPOINT, pa.array([cid] * t.num_rows, pa.int64()))
                             for cid, t in pending])

    def commit(self, checkpoint_id: int) -> None:
        """The checkpoint completed: write what it and earlier ones staged (in the background, in order)."""
        for cid in sorted(c for c in self.staged if c <= checkpoint_id):
            table = self.staged.pop(cid)
            if table is not None:
                self._enqueue(self.ctx.subtask_index, cid, table)

    def restore(self, states, checkpoint_id) -> None:
        """Write again what the restored checkpoint staged; checkpoints written already are skipped."""
        for old_subtask, meta, table in states:
            if table is None or meta.get("job") != str(self.ctx.job_id):
                continue  # another job's staged rows were written when its own checkpoint completed
            for cid in meta.get("staged", []):
                rows = table.filter(pc.equal(table[CHECKPOINT], cid)).drop_columns([CHECKPOINT])
                self._enqueue(old_subtask, cid, rows)

    async def close(self) -> None:
        """End of input: everything staged, then the rest, written before the task finishes."""
        self.commit(FINAL)
        rest = self._take_current()
        if rest is not None:
            self._enqueue(self.ctx.subtask_index, FINAL if self.ctx.checkpointing else None, rest)
        await self._drain()

    # -- writing, one transaction at a time, on the TaskManager's pool ---------------------------
    def _enqueue(self, subtask: int, checkpoint_id: int | None, table: pa.Table | None) -> None:
        if table is None or table.num_rows == 0:
            return
        previous = self._last

        async def write_after_previous() -> None:
            if previous is not None:
                await previous
            if self._failure is None:
                try:
                    await self.ctx.run_blocking(self._write, subtask, checkpoint_id, table)
                except Exception as err:  # noqa: BLE001 - raised at the next write, barrier or close
                    self._failure = err

        self._last = asyncio.get_running_loop().create_task(write_after_previous())

    async def _drain(self) -> None:
        if self._last is not None:
            await self._last
        self._raise_failure()

    def _raise_failure(self) -> None:
        if self._failure is not None:
            raise self._failure

    def _write(self, subtask: int, checkpoint_id: int | None, table: pa.Table) -> None:
        """Blocking: one transaction, retried on a fresh connection when the connection is lost."""
        pg, params = psycopg(), self.ctx.params
        endpoint = endpoint_from_jdbc_url(params["url"], params["user"], params["password"], params["where"])
        retries = int(params.get("max_retries", 3))
        for attempt in range(retries + 1):
            try:
                with connect(endpoint) as conn:
                    if checkpoint_id is not None and not self._commits_table:
                        ensure_commits_table(conn, params["schema_name"])
                        self._commits_table = True
                    with conn.transaction():
                        if checkpoint_id is None or claim(conn, params["schema_name"], self.sink_id, subtask,
                                                          checkpoint_id):
                            self._apply(conn, table)
                return
            except (pg.OperationalError, PostgresError) as err:
                if attempt == retries:
                    raise PostgresError(f"{params['where']}: writing into {self._target_name} failed after "
                                        f"{retries} retries: {server_words(err)} (option 'sink.max-retries')") from None
                time.sleep(min(2.0 ** attempt, 10.0))
            except pg.Error as err:
                raise PostgresError(f"{params['where']}: writing into {self._target_name} failed: "
                                    f"{server_words(err)}") from None

    @property
    def _target_name(self) -> str:
        return f"{self.ctx.params['schema_name']}.{self.ctx.params['table_name']}"

    def _apply(self, conn, table: pa.Table) -> None:
        target = identifier(self.ctx.params["schema_name"], self.ctx.params["table_name"])
        columns = self.columns or [c for c in table.column_names if c != OP]
        with conn.cursor() as cur:
            if not self.key:
                copy_in(cur, target, columns, table)
                return
            upsert(cur, target, columns, self.key, table)


def ensure_commits_table(conn, schema: str) -> None:
    """The table of written checkpoints per sink subtask, created once (concurrent creators tolerated)."""
    pg = psycopg()
    try:
        conn.execute(pg.sql.SQL("CREATE TABLE IF NOT EXISTS {} (sink TEXT NOT NULL, subtask INT NOT NULL, "
                                "checkpoint_id BIGINT NOT NULL, written_at TIMESTAMPTZ NOT NULL DEFAULT now(), "
                                "PRIMARY KEY (sink, subtask))").format(identifier(schema, COMMITS_TABLE)))
    except (pg.errors.UniqueViolation, pg.errors.DuplicateTable):
        pass  # another subtask created it at the same moment


def claim(conn, schema: str, sink_id: str, subtask: int, checkpoint_id: int) -> bool:
    """Inside the write's transaction: record ``checkpoint_id`` as written for this sink subtask; False when it
    (or a later one) is recorded already, so the write is skipped."""
    sql = psycopg().sql
    row = conn.execute(sql.SQL(
        "INSERT INTO {} AS m (sink, subtask, checkpoint_id) VALUES (%s, %s, %s) ON CONFLICT (sink, subtask) DO UPDATE "
        "SET checkpoint_id = EXCLUDED.checkpoint_id, written_at = now() WHERE m.checkpoint_id < EXCLUDED.checkpoint_id "
        "RETURNING 1").format(identifier(schema, COMMITS_TABLE)), (sink_id, subtask, checkpoint_id)).fetchone()
    return row is not None


def upsert(cur, target, columns: list[str], key: list[str], table: pa.Table) -> None:
    """One row per key: deletes, then inserts that replace the row of the same key (ON CONFLICT (key))."""
    sql = psycopg().sql
    names = sql.SQL(", ").join(sql.Identifier(c) for c in columns)
    cur.execute(sql.SQL("CREATE TEMPORARY TABLE fb_stage ON COMMIT DROP AS SELECT {}, 0::smallint AS {} FROM {} "
                        "WITH NO DATA").format(names, sql.Identifier(OP), target))
    copy_in(cur, sql.Identifier("fb_stage"), [*columns, OP], table)
    matches = sql.SQL(" AND ").join(sql.SQL("t.{k} = s.{k}").format(k=sql.Identifier(k)) for k in key)
    cur.execute(sql.SQL("DELETE FROM {} t USING fb_stage s WHERE s.{} = %s AND {}").format(
        target, sql.Identifier(OP), matches), (DELETE_OP,))
    others = [c for c in columns if c not in key]
    action = (sql.SQL("DO UPDATE SET {}").format(sql.SQL(", ").join(
        sql.SQL("{c} = EXCLUDED.{c}").format(c=sql.Identifier(c)) for c in others)) if others else sql.SQL("DO NOTHING"))
    cur.execute(sql.SQL("INSERT INTO {} ({}) SELECT {} FROM fb_stage WHERE {} <> %s ON CONFLICT ({}) {}").format(
        target, names, names, sql.Identifier(OP), sql.SQL(", ").join(sql.Identifier(k) for k in key), action),
        (DELETE_OP,))
