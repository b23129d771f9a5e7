"""The TaskManager process: offers slots, runs deployed subtasks on its Spark session, reports back.

``flinkbench taskmanager --jobmanager URL --slots N`` runs :func:`serve`. The process keeps a control
connection (WebSocket ``/control``) to the leading JobManager: it registers, heartbeats, and handles
slot requests, deployments and cancellations; connector code asks the JobManager over it too
(:meth:`TaskManager.request`, e.g. a push source's next rows). When the connection drops it cancels
its tasks, frees its slots and keeps trying to connect again, so a restarted JobManager finds it
without a restart. With high availability it asks the HA services for the leader before each attempt
(``--jobmanager`` is then only the fallback while none is elected) and, while connected, leaves a
JobManager that no longer holds the leadership, to register with the new leader. It registers while its
Spark session starts and says when that is up (``ready``): only then are its slots handed out.
Everything runs on one asyncio loop; Spark work runs in a thread pool.
"""
from __future__ import annotations

import asyncio
import collections
import itertools
import logging
import os
import signal
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import tornado.httpclient
import tornado.websocket

from runtime.child_process import jobmanager_url_from
from runtime.codec import WireError, decode, encode, from_plain, to_plain
from runtime import tls
from runtime.config import ConfigError, Configuration
from runtime.fileio import working_dir
from runtime.ha.services import HaServices, ha_services
from runtime.ids import ExecutionAttemptId, LeaderSessionId, TaskManagerId
from runtime.messages import (CancelTask, DeployTask, Disconnect, Envelope, FreeSlot, Heartbeat, HeartbeatAck,
                              NotifyCheckpointAborted, NotifyCheckpointComplete, PushedRows, RegisterTaskManager,
                              RegistrationAccepted, RegistrationRejected, RequestSlot, SlotOffer, TaskManagerStatus,
                              TaskStateChanged, TriggerCheckpoint)
from runtime.metrics.endpoint import PrometheusEndpoint, start_endpoint
from runtime.metrics.families import taskmanager_families
from runtime.process_info import LogTail, rss_bytes
from runtime.states import ExecutionState
from runtime.taskmanager import allocators, heartbeat_lease, lean_pyspark
from runtime.taskmanager.network import DataServer
from runtime.taskmanager.services import REQUEST_TIMEOUT_S, TaskManagerServices
from runtime.taskmanager.slots import SlotError, TaskSlotTable
from runtime.taskmanager.spark import SparkRunner
from runtime.taskmanager.task import Task

log = logging.getLogger(__name__)

PENDING_LIMIT = 10_000
STATUS_EVERY_S = 5.0  # how often memory and recent log lines go to the JobManager (its dashboard page)
STATUS_LOG_LINES = 60
WARM_UP_AFTER_IDLE_S = 2.0  # a job waiting for this TaskManager's slots places its tasks well within this


class TaskManager:
    """The TaskManager process: registers its slots with the leading JobManager, runs the tasks deployed into them."""
    def __init__(self, conf: Configuration, jobmanager_url: str | None, token: str, slots: int | None = None,
                 jobmanager_ready_file: str | None = None):
        """``jobmanager_url`` None: read it from ``jobmanager_ready_file`` once the JobManager wrote it."""
        self.conf = conf
        self.bootstrap_url = self.jobmanager_url = (jobmanager_url or "").rstrip("/")
        self.jobmanager_ready_file = jobmanager_ready_file
        if self.bootstrap_url and tls.enabled(conf, tls.REST) and not self.bootstrap_url.startswith("https://"):
            raise ConfigError(f"config key 'security.ssl.rest.enabled' is true but the JobManager URL "
                              f"{self.bootstrap_url} is not https://")
        self.control_ssl = tls.rest_client_context(conf)  # verifies the JobManager; internal cert when on
        self.ha: HaServices | None = None if conf.get("high-availability.type") == "none" else ha_services(
            conf, working_dir(conf))
        self.token = token
        self.tm_id = TaskManagerId(conf.get("taskmanager.resource-id") or TaskManagerId.new())
        self.metrics_endpoint: PrometheusEndpoint | None = None
        self.num_slots = slots or conf.get("taskmanager.numberOfTaskSlots")
        self.slots = TaskSlotTable(self.num_slots)
        self.spark = SparkRunner(conf, self.num_slots, app_name=f"flinkbench-{self.tm_id}")
        self.executor = ThreadPoolExecutor(max_workers=self.num_slots * 2 + 2, thread_name_prefix="task")
        self.io_executor = ThreadPoolExecutor(max_workers=2, thread_name_prefix="checkpoint-io")
        # binds taskmanager.bind-host, advertises taskmanager.host (in RegisterTaskManager, for producers' peers)
        self.data_server = DataServer(conf.taskmanager_bind_host(), conf.get("taskmanager.data.port"), token,
                                      tls.server_context(conf, tls.INTERNAL))
        tls.warn_if_plain(conf, conf.taskmanager_bind_host(), "this TaskManager's data port", tls.INTERNAL)
        self.services = TaskManagerServices(conf, self.spark, self.executor, self.io_executor, self.data_server, token,
                                            tls.internal_client_context(conf), self)
        self.tasks: dict[ExecutionAttemptId, Task] = {}
        self.leader_session_id: LeaderSessionId | None = None
        self.heartbeats = heartbeat_lease.HeartbeatLease()  # how long the leader has not heard us (uploads ask)
        self._ws: tornado.websocket.WebSocketClientConnection | None = None
        self._pending: collections.deque = collections.deque(maxlen=PENDING_LIMIT)
        self._stopping = asyncio.Event()
        self.loop: asyncio.AbstractEventLoop | None = None
        self._replies: dict[int, asyncio.Future] = {}  # request id -> the JobManager's answer
        self._request_ids = itertools.count(1)
        self.log_tail = LogTail(STATUS_LOG_LINES)

    # -- lifecycle ----------------------------------------------------------------------------
    async def run(self) -> None:
        logging.getLogger().addHandler(self.log_tail)
        await self.data_server.start()
        self.metrics_endpoint = start_endpoint(self.conf, self._metric_families, self.token,
                                               self.conf.get("taskmanager.host"))
        loop = self.loop = asyncio.get_running_loop()
        started = self.services.spark_started = loop.run_in_executor(self.executor, lambda: self.spark.session)
        started.add_done_callback(lambda _: self._report_ready())
        started.add_done_callback(lambda _: loop.call_later(WARM_UP_AFTER_IDLE_S, self._warm_up_if_idle))
        if self.jobmanager_ready_file and not self.bootstrap_url:  # started beside its JobManager (LocalCluster)
            self.bootstrap_url = self.jobmanager_url = await jobmanager_url_from(self.jobmanager_ready_file)
        while not self._stopping.is_set():
            try:
                self.jobmanager_url = await self._leader_url()
                await self._connect_and_serve()
            except (OSError, tornado.httpclient.HTTPClientError, tornado.websocket.WebSocketClosedError) as err:
                log.info("JobManager at %s not reachable: %s", self.jobmanager_url, err)
            self._connection_lost()
            try:
                await asyncio.wait_for(self._stopping.wait(), self.conf.get("taskmanager.registration.retry-delay"))
            except asyncio.TimeoutError:
                pass

    async def stop(self) -> None:
        self._stopping.set()
        self._write(Disconnect(f"stopped (pid {os.getpid()})"))  # leaving on purpose: not a loss
        for task in list(self.tasks.values()):
            task.cancel()
        if self._ws:
            self._ws.close()
        await self.data_server.stop()
        if self.metrics_endpoint is not None:
            self.metrics_endpoint.stop()
        await asyncio.get_running_loop().run_in_executor(None, self.spark.stop)
        self.executor.shutdown(wait=False, cancel_futures=True)

    @property
    def ready(self) -> bool:
        """Tasks deployed here start at once: the Spark session is up (or failed to start, so that its
        tasks fail naming why). The ResourceManager hands out the slots of ready TaskManagers only."""
        return self.services.spark_started is not None and self.services.spark_started.done()

    def _report_ready(self) -> None:
        """Tell the JobManager now, not at the next heartbeat: slot requests may be waiting for this."""
        if self.leader_session_id is not None:
            self._write(Heartbeat(self.tm_id, self.slots.report(), self.ready))

    def _warm_up_if_idle(self) -> None:
        """Warm the new Spark session if no task came for it meanwhile: a spare TaskManager then takes a
        failover's tasks at full speed. A task placed here warms it anyway, and a warm-up beside it would
        only take CPU from it; a Spark Connect server's JVM is warm already."""
        started = self.services.spark_started
        failed = started is None or started.cancelled() or started.exception()
        if failed or self.tasks or self.conf.get("spark.remote") or self._stopping.is_set():
            return
        asyncio.get_running_loop().run_in_executor(self.executor, self._warm_up)

    def _warm_up(self) -> None:
        started = time.monotonic()
        try:
            self.spark.warm_up()
            log.info("Spark session warmed up in %.1f s", time.monotonic() - started)
        except Exception as err:  # noqa: BLE001 - a failed warm-up costs only time; a real fault shows in tasks
            log.info("Spark warm-up failed: %s", err)

    def _metric_families(self):
        """Flink's task metrics of every running task, as each last reported them (for Prometheus)."""
        return taskmanager_families(self.conf.get("taskmanager.host"), str(self.tm_id),
                                    [(task.tdd, task.metrics.last_report) for task in self.tasks.values()])

    # -- control connection -------------------------------------------------------------------
    async def _connect_and_serve(self) -> None:
        url = self.jobmanager_url.replace("http://", "ws://").replace("https://", "wss://") + "/control"
        request = tornado.httpclient.HTTPRequest(url, headers={"Authorization": f"Bearer {self.token}"},
                                                 connect_timeout=5, request_timeout=5, ssl_options=self.control_ssl)
        self._ws = await tornado.websocket.websocket_connect(
            request, max_message_size=self.conf.get("rest.server.max-content-length"))
        self._write(RegisterTaskManager(self.tm_id, self.conf.get("taskmanager.host"), self.data_server.port, self.num_slots,
                                        os.getpid(), self.spark.master, self.slots.report(), self.ready))
        loop = asyncio.get_running_loop()
        reader, heartbeat = loop.create_task(self._read_messages(self._ws)), loop.create_task(self._heartbeat())
        ends = {reader} | ({loop.create_task(self._watch_leader())} if self.ha else set())
        try:
            done, _ = await asyncio.wait(ends, return_when=asyncio.FIRST_COMPLETED)
            if reader in done:
                reader.result()  # the connection closed, or reading it raised
            for watcher in done - {reader}:
                if watcher.exception() is not None:  # unforeseen: reconnect rather than follow a leader unwatched
                    log.warning("watching the leader failed: %s; reconnecting", watcher.exception())
        finally:
            for task in ends | {heartbeat}:
                task.cancel()
            self._ws, self.leader_session_id = None, None

    async def _read_messages(self, ws) -> None:
        """Handle the JobManager's messages until it closes the connection."""
        while True:
            raw = await ws.read_message()
            if raw is None:
                return
            self._on_message(raw)

    async def _heartbeat(self) -> None:
        last_status = 0.0
        while True:
            await asyncio.sleep(self.conf.get("heartbeat.interval"))
            if self.leader_session_id is not None:
                self._write(Heartbeat(self.tm_id, self.slots.report(), self.ready))
                if asyncio.get_running_loop().time() - last_status >= STATUS_EVERY_S:
                    last_status = asyncio.get_running_loop().time()
                    self._write(TaskManagerStatus(self.tm_id, rss_bytes(), str(self.conf.get("spark.driver.memory")),
                                                  self.log_tail.lines()))

    async def _leader_url(self) -> str:
        """The leading JobManager's address from the HA services; the bootstrap URL while none leads."""
        if self.ha is None:
            return self.bootstrap_url
        try:
            leader = await asyncio.get_running_loop().run_in_executor(None, self.ha.leader)
        except OSError as err:
            log.warning("cannot read the leader from the HA services: %s", err)
            leader = None
        return leader.address.rstrip("/") if leader else self.bootstrap_url

    async def _watch_leader(self) -> None:
        """Return, ending the connection, once another JobManager holds the leadership (the one we follow
        may be paused or cut off, so its socket alone would not tell us). The connection is left at once:
        closing it politely would wait up to 5 s for a paused JobManager to answer the close."""
        loop, ha = asyncio.get_running_loop(), self.ha
        if ha is None:
            return
        while True:
            await asyncio.sleep(self.conf.get("heartbeat.interval"))
            try:
                leader = await loop.run_in_executor(None, ha.leader)
            except OSError:
                continue
            if leader and self.leader_session_id is not None and leader.session_id != self.leader_session_id:
                log.warning("JobManager %s no longer leads (the leader is %s); reconnecting", self.jobmanager_url, leader.address)
                if self._ws:
                    self._ws.close()
                return

    def _write(self, message) -> bool:
        if self._ws is None:
            return False
        try:
            self._ws.write_message(encode(Envelope(None, to_plain(message))))
            self.heartbeats.wrote(message)
            return True
        except tornado.websocket.WebSocketClosedError:
            return False

    def send(self, message) -> None:
        """Send to the JobManager, keeping the message for the next connection if there is none now."""
        if self.leader_session_id is None or not self._write(message):
            self._pending.append(message)

    async def request(self, message, timeout: float = REQUEST_TIMEOUT_S):
        """Send ``message`` (it has a ``request_id``, numbered here) and return the JobManager's reply with
        that id. ConnectionError when not connected, on a lost connection, or with no answer in time."""
        message.request_id = next(self._request_ids)
        reply = asyncio.get_running_loop().create_future()
        self._replies[message.request_id] = reply
        try:
            if self.leader_session_id is None or not self._write(message):
                raise ConnectionError(f"cannot send {type(message).__name__}: not connected to the JobManager")
            return await asyncio.wait_for(reply, timeout)
        except asyncio.TimeoutError:
            raise ConnectionError(f"the JobManager did not answer {type(message).__name__} within {timeout:g} s") from None
        finally:
            self._replies.pop(message.request_id, None)

    def request_blocking(self, message, timeout: float = REQUEST_TIMEOUT_S):
        """:meth:`request` for connector code in a worker thread: blocks that thread, never the loop."""
        if self.loop is None:
            raise ConnectionError("the TaskManager is not running")
        return asyncio.run_coroutine_threadsafe(self.request(message, timeout), self.loop).result(timeout + 5)

    def _settle(self, reply) -> None:
        waiting = self._replies.get(reply.request_id)
        if waiting is not None and not waiting.done():
            waiting.set_result(reply)

    def _connection_lost(self) -> None:
        """Without a JobManager, running tasks cannot report or checkpoint: stop them and free the slots."""
        for attempt in self.slots.free_all():
            task = self.tasks.get(attempt)
            if task:
                task.cancel()
        self._pending.clear()
        for waiting in self._replies.values():
            if not waiting.done():
                waiting.set_exception(ConnectionError("lost the connection to the JobManager"))

    def _on_message(self, raw) -> None:
        try:
            envelope = decode(raw, Envelope)
            message: Any = from_plain(envelope.body)
        except WireError as err:
            log.warning("bad control message from the JobManager: %s", err)
            return
        self.heartbeats.received(message)
        if isinstance(message, RegistrationAccepted):
            self.leader_session_id = envelope.leader_session_id
            log.info("registered as %s with JobManager %s", self.tm_id, self.jobmanager_url)
            while self._pending:
                self._write(self._pending.popleft())
            return
        if envelope.leader_session_id != self.leader_session_id:
            if not isinstance(message, RegistrationRejected):
                log.warning("dropping %s from a JobManager that is not our leader", type(message).__name__)
                return
        self._handle(message)

    def _handle(self, message) -> None:
        if isinstance(message, RequestSlot):
            self._offer_slot(message)
        elif isinstance(message, FreeSlot):
            self._free_slot(message)
        elif isinstance(message, DeployTask):
            self._deploy(message)
        elif isinstance(message, CancelTask):
            task = self.tasks.get(message.attempt_id)
            if task:
                task.cancel()
        elif isinstance(message, (TriggerCheckpoint, NotifyCheckpointComplete, NotifyCheckpointAborted)):
            self._checkpoint_message(message)
        elif isinstance(message, PushedRows):
            self._settle(message)
        elif isinstance(message, RegistrationRejected):
            log.warning("registration rejected: %s", message.reason)
            if self._ws:
                self._ws.close()
        elif isinstance(message, Disconnect):
            log.warning("JobManager disconnected us: %s", message.reason)
            if self._ws:
                self._ws.close()
        elif not isinstance(message, HeartbeatAck):
            log.warning("unexpected control message %s", type(message).__name__)

    # -- slots and tasks ----------------------------------------------------------------------
    def _offer_slot(self, request: RequestSlot) -> None:
        try:
            self.slots.allocate(request.slot_index, request.allocation_id, request.job_id)
            self.send(SlotOffer(request.allocation_id, request.job_id, request.slot_index, True))
        except SlotError as err:
            self.send(SlotOffer(request.allocation_id, request.job_id, request.slot_index, False, str(err)))

    def _free_slot(self, message: FreeSlot) -> None:
        try:
            running = self.slots.free(message.allocation_id)
        except SlotError:
            return
        for attempt in running:
            task = self.tasks.get(attempt)
            if task:
                task.cancel()

    def _deploy(self, message: DeployTask) -> None:
        tdd = message.descriptor
        try:
            slot = self.slots.by_allocation(tdd.allocation_id)
        except SlotError as err:
            self.send(TaskStateChanged(tdd.job_id, tdd.attempt_id, ExecutionState.FAILED,
                                       f"cannot deploy: {err}"))
            return
        slot.tasks.add(tdd.attempt_id)
        task = Task(tdd, self.services)
        self.tasks[tdd.attempt_id] = task
        asyncio.get_running_loop().create_task(self._run_task(task, slot))

    def _checkpoint_message(self, message) -> None:
        task = self.tasks.get(message.attempt_id)
        if task is None:
            return  # the attempt ended; the coordinator learns that from its state change
        if isinstance(message, TriggerCheckpoint):
            task.trigger_checkpoint(message)
        elif isinstance(message, NotifyCheckpointComplete):
            task.notify_checkpoint_complete(message.checkpoint_id)
        else:
            task.notify_checkpoint_aborted(message.checkpoint_id)

    async def _run_task(self, task: Task, slot) -> None:
        try:
            await task.run()
        finally:
            slot.tasks.discard(task.attempt_id)
            self.tasks.pop(task.attempt_id, None)


async def serve(conf: Configuration, jobmanager_url: str | None, token: str, slots: int | None = None,
                jobmanager_ready_file: str | None = None) -> None:
    """Run a TaskManager process until SIGTERM or SIGINT (``flinkbench taskmanager``)."""
    allocators.configure(conf)
    lean_pyspark.settle_without_pandas(conf)  # first thing, before any thread
    tm = TaskManager(conf, jobmanager_url, token, slots, jobmanager_ready_file)
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, lambda: loop.create_task(tm.stop()))
    print(f"TaskManager {tm.tm_id} with {tm.num_slots} slots for {jobmanager_url or jobmanager_ready_file}", flush=True)
    await tm.run()
