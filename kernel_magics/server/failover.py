"""Following the leading JobManager when the one the panel talks to is gone or no longer leads (HA).

The event stream names every JobManager of the cluster (its snapshot and LeaderChanged events); the
relay remembers them. When the current one cannot be reached, each known JobManager is asked who
leads (``GET /jobmanagers``, which standbys answer too) and the connection moves to that leader, as
the notebook's clients and the TaskManagers do.
"""
from __future__ import annotations

import json
import logging

from tornado.httpclient import AsyncHTTPClient, HTTPClientError, HTTPRequest

from kernel_magics.server.target import Connection, JobManagerTarget, TargetError

log = logging.getLogger(__name__)

ASK_TIMEOUT_S = 3.0


def note_jobmanagers(connection: Connection, message: str | bytes) -> str | None:
    """Remember the JobManagers a stream message lists; returns the leader it names, if any."""
    if b'"jobmanagers"' not in (message if isinstance(message, bytes) else message.encode()):
        return None
    try:
        event = json.loads(message)
    except ValueError:
        return None
    urls = [jm.get("url") or jm.get("address") for jm in event.get("jobmanagers") or []]
    if urls:
        connection.remember(urls)
    return event.get("leader_url") or (event.get("leader") or {}).get("url")


async def find_leader(connection: Connection) -> JobManagerTarget | None:
    """Ask the known JobManagers who leads; move the connection there. None when none answers."""
    try:
        current = connection.current()
        token, context = current.token(), current.ssl_context()
    except TargetError:
        return None
    for url in [u for u in connection.known if u != current.url]:
        request = HTTPRequest(f"{url}/jobmanagers", headers={"Authorization": f"Bearer {token}"},
                              connect_timeout=ASK_TIMEOUT_S, request_timeout=ASK_TIMEOUT_S, ssl_options=context)
        try:
            response = await AsyncHTTPClient().fetch(request, raise_error=False)
            leader = (json.loads(response.body or b"{}").get("leader") or {}).get("url") if response.code == 200 else None
        except (OSError, HTTPClientError, ValueError):
            continue
        if leader and leader.rstrip("/") != current.url:
            log.info("Flinkbench: the JobManager at %s is gone; following the leader at %s", current.url, leader)
            return connection.follow(leader)
    return None
