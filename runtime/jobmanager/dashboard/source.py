"""What the dashboard reads: its own JobManager's REST API (Flink's paths and field names, as Flink's web
UI reads them).

The REST calls go over HTTP to this very process, on its own loop, with the cluster token: the pages
see exactly what every other client sees, and nothing of the roles' internals.
"""
from __future__ import annotations

import json
import ssl

from tornado.httpclient import AsyncHTTPClient, HTTPClientError, HTTPRequest

REQUEST_TIMEOUT_S = 10.0


class DashboardError(Exception):
    """A REST call the dashboard made was refused or failed; the text says which and why."""

    def __init__(self, message: str, status: int = 0):
        super().__init__(message)
        self.status = status


class RestSource:
    def __init__(self, url: str, token: str, ssl_context: ssl.SSLContext | None = None):
        self.url = url.rstrip("/")
        self._token = token
        self._ssl = ssl_context  # with REST TLS: verifies this JobManager's own certificate

    async def get(self, path: str) -> dict:
        return await self.call("GET", path)

    async def call(self, method: str, path: str, body: dict | None = None) -> dict:
        """One REST call; the JSON answer, or DashboardError naming the call and the JobManager's message."""
        request = HTTPRequest(self.url + path, method=method, headers={
            "Authorization": f"Bearer {self._token}", "Content-Type": "application/json"},
            body=json.dumps(body) if body is not None else (b"" if method in ("POST", "PATCH", "PUT") else None),
            request_timeout=REQUEST_TIMEOUT_S, allow_nonstandard_methods=True, ssl_options=self._ssl)
        try:
            response = await AsyncHTTPClient().fetch(request, raise_error=False)
        except (OSError, HTTPClientError) as err:
            raise DashboardError(f"{method} {path}: {err}") from None
        try:
            payload = json.loads(response.body or b"{}")
        except ValueError:
            payload = {}
        if response.code >= 400 or response.code == 599:
            errors = "; ".join(payload.get("errors") or []) if isinstance(payload, dict) else ""
            raise DashboardError(f"{method} {path}: HTTP {response.code} {errors or response.reason}", response.code)
        return payload if isinstance(payload, dict) else {"value": payload}
