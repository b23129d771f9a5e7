"""The Dispatcher's REST API: Flink's paths and field names, under ``/v1`` and bare.

- gate: authenticate first (401 JSON for anything without the token but ``/healthz``), ``/v1``,
  body limits (413), JSON 404.
- routes: the route table; openapi: the OpenAPI 3 description generated from it (``/v1/openapi.json``).
- messages: every request and response body; fields: how a message field names itself on the wire.
- cluster, jobs, operations, data, streams: the handlers, which see only the Dispatcher's gateway
  (runtime.jobmanager.gateways) and turn its snapshots into messages (convert).
"""
from __future__ import annotations

from runtime.jobmanager.rest.base import RestContext
from runtime.jobmanager.rest.gate import Authenticator, NotFoundHandler, Pages, RestGate
from runtime.jobmanager.rest.openapi import all_routes, document
from runtime.jobmanager.rest.routes import OPEN_PATHS, Route
from runtime.jobmanager.rest.streams import cluster_snapshot

__all__ = ["Authenticator", "NotFoundHandler", "Pages", "RestContext", "RestGate",
           "Route", "all_routes", "cluster_snapshot", "document", "gate", "rules"]


def rules(ctx: RestContext) -> list:
    """Tornado URL rules for every REST route."""
    return [(route.pattern, route.handler, {"ctx": ctx}) for route in all_routes()]


def gate(app, auth: Authenticator, max_content_length: int, websocket_paths: tuple[str, ...] = (),
         pages: Pages | None = None) -> RestGate:
    """The front door for ``app`` (the JobManager's tornado application with the rules above) and ``pages``;
    the extra ``websocket_paths`` are the cluster's own (TaskManagers'), for admins' tokens only."""
    sockets = frozenset(r.path for r in all_routes() if r.websocket) | frozenset(websocket_paths)
    return RestGate(app, auth, max_content_length, OPEN_PATHS, sockets, pages, frozenset(websocket_paths))
