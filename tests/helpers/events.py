"""Reading the JobManager's event stream in tests."""
from __future__ import annotations

import json
import threading

import websocket


class EventRecorder:
    """Reads the JobManager's event stream on a thread, as the notebook widgets do."""

    def __init__(self, cluster):
        url = cluster.url.replace("http://", "ws://") + "/events"
        self.ws = websocket.create_connection(url, header=[f"Authorization: Bearer {cluster.token}"], timeout=60)
        self.snapshot = json.loads(self.ws.recv())
        self.events: list[dict] = []
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self):
        try:
            while message := self.ws.recv():
                self.events.append(json.loads(message))
        except (websocket.WebSocketException, OSError):
            pass

    def of_type(self, kind: str) -> list[dict]:
        return [e for e in list(self.events) if e["type"] == kind]

    def close(self):
        self.ws.close()
