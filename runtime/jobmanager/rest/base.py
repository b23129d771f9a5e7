"""What every REST handler shares: the gateway it sees, JSON in and out, and errors as JSON.

A handler method is declared with :func:`operation` (its summary, request and response message
classes, status); the same declaration generates the OpenAPI description (runtime.jobmanager.rest.
openapi) and turns what the method returns into the response body. Exceptions of the gateway's
vocabulary become 4xx answers here, once: an unknown job is 404, an operation its state refuses
409, a body or parameter that does not fit 400.
"""
from __future__ import annotations

import functools
import inspect
import json
import logging
from dataclasses import dataclass, field
from typing import Any, Protocol
from collections.abc import Callable

import tornado.web

from runtime.checkpoint.storage import StorageError
from runtime.config import ConfigError, Configuration
from runtime.connectors.push import PushError
from runtime.errors import SubmissionError
from runtime.jobmanager.gateways import (DispatcherGateway, LeaderRetriever, OperationRefused, UnknownCheckpoint,
                                         UnknownJob, UnknownTaskManager)
from runtime.jobmanager.logins import LoginCodes
from runtime.jobmanager.push import PushNotKept, SourceRefused, UnknownSource
from runtime.ha.services import LeadershipLost
from runtime.jobmanager.rest.fields import BodyError, decode, encode
from runtime.jobmanager.rest.messages import ErrorResponseBody
from runtime.jobmanager.savepoint_browser import SavepointBrowser
from runtime.metrics.query import QueryError
from runtime.process_logs import NoLogFile
from runtime.jobmanager.rest.scope import Forbidden, ScopedGateway, caller_of
from runtime.users import Caller, UnknownUser, User, UserError

log = logging.getLogger(__name__)

MAX_JSON_DEPTH = 64

#: gateway exceptions and the status they answer with
STATUS_OF: tuple[tuple[type[BaseException], int], ...] = (
    (PushNotKept, 503), (LeadershipLost, 503), (UnknownJob, 404), (UnknownTaskManager, 404), (UnknownSource, 404),
    (UnknownCheckpoint, 404), (UnknownUser, 404), (Forbidden, 403), (OperationRefused, 409), (UserError, 400),
    (BodyError, 400), (SubmissionError, 400), (ConfigError, 400), (PushError, 400), (SourceRefused, 400),
    (QueryError, 400), (NoLogFile, 404), (StorageError, 404),
)


@dataclass
class RestContext:
    """What the REST layer is given: the Dispatcher's gateway, leadership, and the configuration."""
    gateway: DispatcherGateway
    leader: LeaderRetriever
    conf: Configuration
    resources: Callable[[], dict] | None = None  # the resource provider's state, for the event stream's start
    logins: LoginCodes = field(default_factory=LoginCodes)  # the dashboard's one-time codes, shared with it
    savepoints: SavepointBrowser | None = None  # the savepoint browser (a JobManager's; not the history server's)
    users: UserGateway | None = None  # the cluster's users (routes /users)


class UserGateway(Protocol):
    """What the REST layer asks of the cluster's users (runtime.jobmanager.user_registry)."""

    def users(self) -> list[User]: ...

    async def add(self, name: str, slots: int | None, admin: bool) -> tuple[User, str]: ...

    async def remove(self, name: str) -> None: ...


class HTTPError(tornado.web.HTTPError):
    """An error whose message the client sees."""

    def __init__(self, status: int, message: str, leader: str | None = None):
        super().__init__(status, reason=None)
        self.message = message
        self.leader = leader


@dataclass(frozen=True)
class Query:
    name: str
    description: str
    kind: type = str


@dataclass(frozen=True)
class Operation:
    """One method of one route, as the OpenAPI description and the dispatcher of replies see it."""
    summary: str
    response: Any = None  # a message class, list[...] of one, or None (no body)
    status: int = 200
    request: type | None = None
    query: tuple[Query, ...] = ()
    media_type: str = "application/json"


def operation(summary: str, response: Any = None, **details) -> Callable:
    """Declare a handler method; what it returns (a message) becomes the reply with ``status``."""
    op = Operation(summary, response, **details)

    def declare(fn: Callable) -> Callable:
        @functools.wraps(fn)
        async def run(self: ApiHandler, *args, **kwargs):
            try:
                result = fn(self, *args, **kwargs)
                if inspect.isawaitable(result):
                    result = await result
            except HTTPError:
                raise
            except tuple(exc for exc, _ in STATUS_OF) as err:
                raise HTTPError(next(code for exc, code in STATUS_OF if isinstance(err, exc)), str(err)) from None
            if not self._finished:
                self.reply(result, op.status)
        run.operation = op  # type: ignore[attr-defined]
        return run
    return declare


def documented(summary: str, **details) -> Callable:
    """Describe a method that answers by itself (a WebSocket upgrade) for the OpenAPI document only."""
    def declare(fn: Callable) -> Callable:
        fn.operation = Operation(summary, **details)  # type: ignore[attr-defined]
        return fn
    return declare


def parse_json(raw: bytes) -> Any:
    """A JSON document, refused (BodyError) when it does not parse or nests deeper than MAX_JSON_DEPTH."""
    try:
        data = json.loads(raw)
    except RecursionError:
        raise BodyError(f"request body nests deeper than {MAX_JSON_DEPTH} levels") from None
    except (ValueError, UnicodeDecodeError) as err:
        raise BodyError(f"request body is not valid JSON: {err}") from None
    level, todo = 0, [data]
    while todo:
        level += 1
        if level > MAX_JSON_DEPTH:
            raise BodyError(f"request body nests deeper than {MAX_JSON_DEPTH} levels")
        todo = [v for node in todo if isinstance(node, (dict, list))
                for v in (node.values() if isinstance(node, dict) else node) if isinstance(v, (dict, list))]
    return data


class JsonErrors:
    """Mixin for any RequestHandler: error replies are ``{"errors": [...]}``, never HTML or a traceback."""

    def write_error(self, status_code: int, **kwargs) -> None:
        exc = kwargs.get("exc_info", (None, None, None))[1]
        leader = None
        if isinstance(exc, HTTPError):
            message, leader = exc.message, exc.leader
        elif isinstance(exc, tornado.web.HTTPError):
            message = exc.log_message or self._reason  # type: ignore[attr-defined]
        else:
            message = f"internal error: {type(exc).__name__}: {exc}" if exc else self._reason  # type: ignore[attr-defined]
        self.set_header("Content-Type", "application/json")  # type: ignore[attr-defined]
        self.finish(json.dumps(encode(ErrorResponseBody(errors=[message], leader=leader))))  # type: ignore[attr-defined]


class ApiHandler(JsonErrors, tornado.web.RequestHandler):
    """Base of the REST handlers. The token was checked before routing (runtime.jobmanager.rest.gate), which
    found the caller; handlers reach the Dispatcher only as that caller may (runtime.jobmanager.rest.scope).
    A standby JobManager refuses every route but those marked ``standby_serves`` with 503."""

    #: whether a standby answers this route itself; the others it refuses naming the leader
    standby_serves = False
    #: what the route does, when only admins may do it (runtime.jobmanager.rest.scope answers others 403)
    admin_only: str | None = None

    def initialize(self, ctx: RestContext) -> None:
        self.ctx = ctx

    @property
    def caller(self) -> Caller:
        return caller_of(self.request)

    @property
    def gateway(self) -> ScopedGateway:
        return ScopedGateway(self.ctx.gateway, self.caller)

    def prepare(self) -> None:
        if not self.standby_serves and not self.ctx.leader.is_leader:
            raise HTTPError(503, self.ctx.leader.not_leader_message(), leader=self.ctx.leader.leader_address())
        if self.admin_only:
            try:
                self.gateway.require_admin(self.admin_only)
            except Forbidden as err:
                raise HTTPError(403, str(err)) from None

    def check_xsrf_cookie(self) -> None:
        """Cookie-authenticated writes come from the dashboard page; bearer calls need no XSRF token."""

    def body(self, cls: type) -> Any:
        """The request body as message ``cls`` (an empty body is ``{}``); 400 naming what does not fit."""
        data = parse_json(self.request.body) if self.request.body.strip() else {}
        return decode(cls, data)

    def int_query(self, name: str, default: int, minimum: int = 0) -> int:
        raw = self.get_query_argument(name, str(default))
        try:
            value = int(raw)
        except ValueError:
            raise HTTPError(400, f"query parameter '{name}' must be an integer, got {raw!r}") from None
        if value < minimum:
            raise HTTPError(400, f"query parameter '{name}' must be at least {minimum}")
        return value

    def reply(self, message: Any, status: int = 200) -> None:
        self.set_status(status)
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps(encode(message) if message is not None else {}, allow_nan=False))
