"""The OpenAPI 3 description of the REST API, generated from the route table and the message classes
(never written by hand), served at ``/v1/openapi.json``."""
from __future__ import annotations

import functools

from runtime.version import version
from runtime.jobmanager.rest import messages as m
from runtime.jobmanager.rest.base import ApiHandler, operation
from runtime.jobmanager.rest.fields import RawJson, schema
from runtime.jobmanager.rest.routes import OPEN_PATHS, ROUTES, Route

#: errors any route may answer, and what they mean
ERRORS = {
    "400": "The request does not fit: malformed JSON, a field of the wrong type, a bad parameter.",
    "401": "Missing or invalid cluster token (Authorization: Bearer <token>).",
    "404": "No such job, task, TaskManager, source or trigger.",
    "405": "The path does not take this method.",
    "409": "The job's state does not allow this now.",
    "413": "The body is larger than rest.server.max-content-length.",
    "503": "This JobManager is a standby; the body names the leader.",
}


class OpenApiHandler(ApiHandler):
    standby_serves = True

    @operation("This description of the REST API (OpenAPI 3.0).", RawJson)
    def get(self):
        return document()


OPENAPI = Route("/openapi.json", OpenApiHandler)


def all_routes() -> tuple[Route, ...]:
    return ROUTES + (OPENAPI,)


@functools.lru_cache(maxsize=1)
def document() -> dict:
    components: dict[str, dict] = {}
    error_ref = schema(m.ErrorResponseBody, components)
    paths: dict[str, dict] = {}
    for route in all_routes():
        item = paths.setdefault(route.openapi_path, {})
        for method, op in route.operations().items():
            item[method] = _operation(route, method, op, components, error_ref)
    return {
        "openapi": "3.0.3",
        "info": {"title": "Flinkbench JobManager REST API", "version": f"v1/{version()}",
                 "description": f"Flink's REST API v1 (as Flink {m.FLINK_REST_VERSION} serves it) where Flink has "
                                "the same thing, and Flinkbench's own routes beside it. Every path is also served "
                                "without the /v1 prefix."},
        "servers": [{"url": "/v1"}],
        "security": [{"token": []}],
        "paths": paths,
        "components": {"schemas": components,
                       "securitySchemes": {"token": {"type": "http", "scheme": "bearer",
                                                     "description": "the cluster token, from its token file"}}},
    }


def _operation(route: Route, method: str, op, components: dict, error_ref: dict) -> dict:
    out: dict = {"summary": op.summary, "operationId": f"{method}{_camel(route.path)}",
                 "responses": _responses(op, components, error_ref)}
    params = [{"name": p, "in": "path", "required": True, "schema": {"type": "string"}} for p in route.params]
    params += [{"name": q.name, "in": "query", "required": False, "description": q.description,
                "schema": schema(q.kind, components)} for q in op.query]
    if params:
        out["parameters"] = params
    if op.request is not None:
        out["requestBody"] = {"required": False,
                              "content": {"application/json": {"schema": schema(op.request, components)}}}
    if route.path in OPEN_PATHS:
        out["security"] = []
    return out


def _responses(op, components: dict, error_ref: dict) -> dict:
    ok: dict = {"description": "The request was successful."}
    if op.response is not None:
        ok["content"] = {op.media_type: {"schema": schema(op.response, components)}}
    errors = {code: {"description": text, "content": {"application/json": {"schema": error_ref}}}
              for code, text in ERRORS.items()}
    return {str(op.status): ok, **errors}


def _camel(path: str) -> str:
    words = [w.lstrip(":") for w in path.replace("-", "/").replace(".", "/").split("/") if w]
    return "".join(w[:1].upper() + w[1:] for w in words)
