"""A logical replication stream over one replication connection (psycopg's libpq layer: START_REPLICATION and
the COPY protocol it opens), read in whole transactions.

:meth:`ChangeStream.poll` returns the changes of the transactions that committed since the last call, and
``position`` is then the LSN just past the last of them: a stream started there again (after a failure)
sends exactly what follows. A transaction half received when a poll ends stays here until its commit
arrives. While no transaction is open, the server's keepalive (asked for with each status update) moves
``position`` on over WAL that holds nothing for this table, so the slot does not pin it.

:meth:`ChangeStream.confirm` sets what the status updates report as flushed: the slot's confirmed position,
below which the server may free its WAL. The source calls it only for positions whose checkpoint completed.
Runs on the task's worker threads, one call at a time.
"""
from __future__ import annotations

import select
import struct
import time

from runtime.connectors.postgres import PostgresError, server_words
from runtime.connectors.postgres_cdc.decoding import Begin, Change, Commit

PG_EPOCH_US = 946_684_800 * 1_000_000  # 2000-01-01 in Unix microseconds
STATUS_INTERVAL_S = 2.0


def lsn_text(lsn: int) -> str:
    """An LSN as PostgreSQL writes it (``0/1925508``)."""
    return f"{lsn >> 32:X}/{lsn & 0xFFFFFFFF:X}"


def lsn_int(text: str) -> int:
    """An LSN from PostgreSQL's text (``0/1925508``)."""
    high, low = text.split("/")
    return (int(high, 16) << 32) | int(low, 16)


class ChangeStream:
    """The changes of one slot from ``start`` on, decoded by ``decoder`` (runtime.connectors.postgres_cdc.decoding)."""

    def __init__(self, conn, decoder, slot: str, start: int, plugin_options: str, where: str):
        self.conn, self.decoder, self.where = conn, decoder, where
        self.position = start
        self.confirmed = 0
        self._open: list[Change] | None = None
        self._status_at = 0.0
        pgconn = conn.pgconn
        pgconn.send_query(f'START_REPLICATION SLOT "{slot}" LOGICAL {lsn_text(start)} ({plugin_options})'.encode())
        result = pgconn.get_result()
        if result.error_message:
            raise PostgresError(f"{where}: replication from slot {slot!r} could not start: "
                                f"{server_words(result.error_message.decode(errors='replace'))}")

    def poll(self, max_rows: int, wait_s: float) -> list[Change]:
        """The changes of whole transactions received within ``wait_s`` (fewer once ``max_rows`` are in)."""
        out: list[Change] = []
        deadline = time.monotonic() + wait_s
        while len(out) < max_rows:
            message = self._next(deadline)
            if message is None:
                break
            if message[:1] == b"w":
                (data_start,) = struct.unpack_from(">Q", message, 1)
                for event in self.decoder.decode(message[25:], data_start):
                    out += self._on_event(event)
            elif message[:1] == b"k":
                wal_end, _, reply = struct.unpack_from(">QQB", message, 1)
                if self._open is None and wal_end > self.position:
                    self.position = wal_end
                if reply:
                    self._send_status(False)
        if time.monotonic() - self._status_at >= STATUS_INTERVAL_S:
            self._send_status(self._open is None)
        return out

    def _on_event(self, event) -> list[Change]:
        if isinstance(event, Begin):
            self._open = []
        elif isinstance(event, Change):
            if self._open is None:
                raise PostgresError(f"{self.where}: a change arrived outside a transaction")
            self._open.append(event)
        elif isinstance(event, Commit):
            done, self._open = self._open or [], None
            self.position = max(self.position, event.end_lsn)
            return done
        return []

    def confirm(self, lsn: int) -> None:
        """Report ``lsn`` as flushed from the next status update on (a completed checkpoint holds it)."""
        if lsn > self.confirmed:
            self.confirmed = lsn
            self._send_status(False)

    def _next(self, deadline: float) -> bytes | None:
        """The next CopyData message, or None when none came by ``deadline``."""
        pgconn = self.conn.pgconn
        while True:
            size, data = pgconn.get_copy_data(1)
            if size > 0:
                return bytes(data)
            if size < 0:
                raise PostgresError(f"{self.where}: the replication stream ended: "
                                    f"{server_words(pgconn.error_message.decode(errors='replace'))}")
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            select.select([pgconn.socket], [], [], left)
            pgconn.consume_input()

    def _send_status(self, ask_reply: bool) -> None:
        """A standby status update: the confirmed LSN as written, flushed and applied; asks for a keepalive when
        ``ask_reply`` (its WAL end moves ``position`` on while no transaction is open)."""
        now_us = int(time.time() * 1_000_000) - PG_EPOCH_US
        lsn = self.confirmed
        self.conn.pgconn.put_copy_data(struct.pack(">cQQQqB", b"r", lsn, lsn, lsn, now_us, 1 if ask_reply else 0))
        self.conn.pgconn.flush()
        self._status_at = time.monotonic()

    def close(self) -> None:
        """Close the replication connection (the slot stays, with its confirmed position)."""
        try:
            self.conn.close()
        except Exception:  # noqa: BLE001 - a connection already broken has nothing to close
            pass
