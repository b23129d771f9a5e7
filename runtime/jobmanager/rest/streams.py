"""The event stream (WebSocket ``/events``): a snapshot of the cluster in the REST shapes first, then
every event (runtime.events) as it happens. The token was checked before routing (rest.gate); a user's
stream shows what that user may see (rest.scope)."""
from __future__ import annotations

import asyncio
import json
import time

import tornado.websocket

from runtime.jobmanager.gateways import DispatcherGateway, LeaderRetriever
from runtime.jobmanager.rest import convert
from runtime.jobmanager.rest.base import JsonErrors, RestContext, documented
from runtime.jobmanager.rest.fields import encode
from runtime.jobmanager.rest.taskmanager_view import task_manager
from runtime.jobmanager.rest.scope import ScopedGateway, caller_of


def cluster_snapshot(gateway: DispatcherGateway, leader: LeaderRetriever, seq: int) -> dict:
    """The ``ClusterSnapshot`` that opens the event stream: /overview, /taskmanagers and /jobs/overview
    in one message (the dashboard's model starts from it too)."""
    now = time.time()
    overview = convert.cluster_overview(gateway.cluster_overview(), convert.leadership(leader.leadership_view()))
    return {"type": "ClusterSnapshot", "seq": seq, "ts": now, **encode(overview),
            "taskmanagers": encode([task_manager(tm) for tm in gateway.request_task_managers()]),
            "jobs": encode([convert.job_details(j, now) for j in gateway.list_jobs()])}


class EventsSocket(JsonErrors, tornado.websocket.WebSocketHandler):
    def initialize(self, ctx: RestContext) -> None:
        self.ctx = ctx
        self._pump: asyncio.Task | None = None
        self._sub = None

    def check_origin(self, origin: str) -> bool:
        return True  # the token, not the origin, is the guard

    @documented("The event stream (a WebSocket): a ClusterSnapshot first, then every event as it happens.",
                status=101)
    async def get(self, *args, **kwargs):
        await super().get(*args, **kwargs)

    def open(self):
        gateway = ScopedGateway(self.ctx.gateway, caller_of(self.request))
        self._sub = gateway.subscribe_events()
        snapshot = cluster_snapshot(gateway, self.ctx.leader, self._sub.seq)
        if self.ctx.resources is not None:
            snapshot["resource-provider"] = self.ctx.resources()
        self.write_message(json.dumps(snapshot, default=str))
        self._pump = asyncio.get_running_loop().create_task(self._forward())

    async def _forward(self):
        while True:
            event = await self._sub.next()
            if event is None:
                self.close(1013, "event subscriber fell behind; reconnect")
                return
            try:
                await self.write_message(json.dumps(event, default=str))
            except tornado.websocket.WebSocketClosedError:
                return

    def on_message(self, message):
        pass  # the stream is one-way

    def on_close(self):
        if self._sub:
            self._sub.close()
        if self._pump:
            self._pump.cancel()
