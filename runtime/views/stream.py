"""EventStream: one WebSocket to the leading JobManager's ``/events``, feeding a ClusterModel.

Runs in a daemon thread. The first message of each connection is a ``ClusterSnapshot``, which resets
the model; every later message is applied to it. When the connection drops, the model's connection
state says so and the thread reconnects with backoff, trying the JobManagers the last snapshot
named (HA standbys) as well as the one it had and every address it was given (a leader's snapshot
taken before a standby first announced itself does not list that standby, and a lone leader sends no
event when one joins); a snapshot that names a different leader moves the stream there. A
refused token is not retried: the model says the token was refused. A ``wss://`` stream is
verified against the client's CA certificates (runtime.tls), host name included.
"""
from __future__ import annotations

import json
import logging
import ssl
import threading
from collections.abc import Callable, Sequence

import websocket

from runtime import tls
from runtime.views.model import ClusterModel

log = logging.getLogger(__name__)

CONNECT_TIMEOUT_S = 10.0
IDLE_PING_S = 5.0
MAX_BACKOFF_S = 5.0


def events_url(http_url: str) -> str:
    base = http_url.rstrip("/")
    return ("wss://" + base[len("https://"):] if base.startswith("https://") else
            "ws://" + base[len("http://"):] if base.startswith("http://") else base) + "/events"


def _connect(url: str, token: str | None, ssl_context: ssl.SSLContext | None) -> websocket.WebSocket:
    header = [f"Authorization: Bearer {token}"] if token else []
    return websocket.create_connection(events_url(url), header=header, timeout=CONNECT_TIMEOUT_S,
                                       sslopt={"context": ssl_context or tls.client_context()})


def _first_snapshot(ws: websocket.WebSocket) -> dict:
    snapshot = json.loads(ws.recv())
    if snapshot.get("type") != "ClusterSnapshot":
        raise ValueError(f"the event stream began with {snapshot.get('type')!r}, not a ClusterSnapshot")
    return snapshot


def take_snapshot(url: str, token: str | None, ssl_context: ssl.SSLContext | None = None) -> dict:
    """The ClusterSnapshot a new connection to ``url``'s event stream opens with (the connection is then closed)."""
    ws = _connect(url, token, ssl_context)
    try:
        return _first_snapshot(ws)
    finally:
        ws.close()


class EventStream:
    """Reads a JobManager's /events WebSocket on a thread into a ClusterModel, reconnecting (and following the
    leader)."""
    def __init__(self, model: ClusterModel, url: str, token: str | None,
                 on_leader_change: Callable[[str], None] | None = None, addresses: Sequence[str] = (),
                 ssl_context: ssl.SSLContext | None = None):
        self.model = model
        self.url = url.rstrip("/")
        self.addresses = [a.rstrip("/") for a in addresses if a]  # the cluster's JobManagers as configured
        self.token = token
        self.ssl_context = ssl_context  # wss:// is verified against it, else against the system's CAs
        self.on_leader_change = on_leader_change
        self.connected = threading.Event()
        self._closed = threading.Event()
        self._ws: websocket.WebSocket | None = None
        self._thread = threading.Thread(target=self._run, name="flinkbench-events", daemon=True)

    def start(self) -> EventStream:
        self.model.set_connection("connecting", self.url, f"connecting to the JobManager at {self.url} \u2026")
        self._thread.start()
        return self

    def close(self) -> None:
        self._closed.set()
        ws = self._ws
        if ws is not None:
            try:
                ws.close()
            except Exception:
                pass
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(5)
        self.model.set_connection("disconnected", self.url, "not connected")

    def wait_connected(self, timeout: float) -> bool:
        return self.connected.wait(timeout)

    # -- the reader thread --------------------------------------------------------------------
    def _run(self) -> None:
        backoff = 0.5
        attempt = 0
        while not self._closed.is_set():
            candidates = self._candidates()
            url = candidates[attempt % len(candidates)]
            try:
                moved = self._session(url)
                backoff, attempt = 0.5, 0
                if self._closed.is_set():
                    return
                if moved:
                    continue
                reason = "the JobManager closed the event stream"
            except websocket.WebSocketBadStatusException as err:
                if err.status_code in (401, 403):
                    self.model.set_connection("refused", url, f"the JobManager at {url} refused the cluster token "
                                                             f"(HTTP {err.status_code}); reconnect with the right token")
                    return
                reason = f"HTTP {err.status_code}"
            except ssl.SSLCertVerificationError as err:  # the wrong CA or host name: retrying will not help
                self.model.set_connection("refused", url, f"the certificate of the JobManager at {url} does not "
                                                         f"verify: {err.verify_message}")
                return
            except (websocket.WebSocketException, OSError, ValueError) as err:
                reason = str(err) or type(err).__name__
            except Exception as err:  # noqa: BLE001 - a message the model cannot apply must not end the stream
                log.exception("event stream from %s failed", url)
                reason = f"{type(err).__name__}: {err}"
            self.connected.clear()
            if self._closed.is_set():
                return
            attempt += 1
            self.model.set_connection("lost", url, f"lost the connection to the JobManager at {url} ({reason}); "
                                                   f"reconnecting in {backoff:g} s \u2026")
            self._closed.wait(backoff)
            backoff = min(backoff * 2, MAX_BACKOFF_S)

    def _candidates(self) -> list[str]:
        urls = [self.url]
        with self.model.lock:
            known = [self.model.leader.get("url")] + [jm.get("url") for jm in self.model.jobmanagers]
        for address in [u.rstrip("/") for u in known + self.addresses if u]:
            if address not in urls:
                urls.append(address)
        return urls

    def _session(self, url: str) -> bool:
        """One connection: snapshot, then events until it ends (returns) or fails (raises).

        Returns True when the snapshot or a LeaderChanged event named another leader, to connect to next."""
        ws = _connect(url, self.token, self.ssl_context)
        self._ws = ws
        try:
            snapshot = _first_snapshot(ws)
            self.model.reset(snapshot)
            leader = ((snapshot.get("leader") or {}).get("url") or url).rstrip("/")
            self._switch_to(url)
            if leader != url:
                self._switch_to(leader)
                return True
            self.model.set_connection("connected", url, f"connected to {url}")
            self.connected.set()
            ws.settimeout(IDLE_PING_S)
            while not self._closed.is_set():
                try:
                    message = ws.recv()
                except websocket.WebSocketTimeoutException:
                    ws.ping()
                    continue
                if not message:
                    return False
                event = json.loads(message)
                self.model.apply(event)
                leader = (event.get("leader_url") or "").rstrip("/") if event.get("type") == "LeaderChanged" else ""
                if leader and leader != url:
                    self._switch_to(leader)
                    return True
            return False
        finally:
            self._ws = None
            try:
                ws.close()
            except Exception:
                pass

    def _switch_to(self, url: str) -> None:
        if url != self.url:
            log.info("event stream moves from %s to %s", self.url, url)
            self.url = url
            if self.on_leader_change is not None:
                self.on_leader_change(url)
