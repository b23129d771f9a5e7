"""The TaskManager process: offers slots, runs deployed subtasks on its Spark session, reports back.

``flinkbench taskmanager --jobmanager URL --slots N`` runs :func:`serve`. The process is two pieces, as
the JobManager's side is: its control endpoint (runtime.taskmanager.control_endpoint: the connection to
the leading JobManager, reconnects, the HA leader, request/reply) and this role, which answers slot
requests, deploys and cancels tasks, passes checkpoint triggers and notifications to them, and owns the
process's Spark session. Tasks see the role only through runtime.taskmanager.services.TaskServices.

The role registers while its Spark session starts and says when that is up (``ready``): only then are
its slots handed out. When the connection drops it cancels its tasks and frees its slots; the endpoint
connects again, so a restarted or newly elected JobManager finds it without a restart. Everything runs
on one asyncio loop; Spark work runs in a thread pool.
"""
from __future__ import annotations

import asyncio
import logging
import os
import signal
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from runtime import tls
from runtime.config import Configuration
from runtime.fileio import working_dir
from runtime.ha.drivers import ha_services
from runtime.ids import ExecutionAttemptId, TaskManagerId
from runtime.messages import (CancelTask, DeployTask, FreeSlot, Heartbeat, NotifyCheckpointAborted,
                              NotifyCheckpointComplete, RegisterTaskManager, RequestSlot, SlotOffer, TaskManagerStatus,
                              TaskStateChanged, TriggerCheckpoint)
from runtime.metrics.endpoint import PrometheusEndpoint, cluster_token_only, start_endpoint
from runtime.metrics.families import taskmanager_families
from runtime.process_info import LogTail
from runtime.states import ExecutionState
from runtime.taskmanager import allocators, lean_pyspark
from runtime.taskmanager.control_endpoint import ControlEndpoint
from runtime.taskmanager.network import DataServer
from runtime.taskmanager.python_environment import PythonEnvironments
from runtime.taskmanager.services import TaskManagerServices
from runtime.taskmanager.slots import SlotError, TaskSlotTable
from runtime.taskmanager.status import StatusReporter
from runtime.taskmanager.spark import SparkRunner
from runtime.taskmanager.task import Task
from runtime.taskmanager.warm_up import warm_up

log = logging.getLogger(__name__)

STATUS_LOG_LINES = 60
WARM_UP_GRACE_S = 1.0  # a job waiting for this TaskManager's slots takes them well within this of its session's start
ARCHIVE_AFTER_IDLE_S = 2.0  # the class archive's dump waits this long after the warm-up for a task that may come


class TaskManager:
    """The TaskManager role: its slots, the tasks deployed into them, and its Spark session."""
    def __init__(self, conf: Configuration, jobmanager_url: str | None, token: str, slots: int | None = None,
                 jobmanager_ready_file: str | None = None):
        """``jobmanager_url`` None: read it from ``jobmanager_ready_file`` once the JobManager wrote it."""
        self.conf = conf
        ha = None if conf.get("high-availability.type") == "none" else ha_services(conf, working_dir(conf))
        self.control = ControlEndpoint(conf, jobmanager_url, token, ha, jobmanager_ready_file)
        self.token = token
        self.tm_id = TaskManagerId(conf.get("taskmanager.resource-id") or TaskManagerId.new())
        self.metrics_endpoint: PrometheusEndpoint | None = None
        self.num_slots = slots or conf.get("taskmanager.numberOfTaskSlots")
        self.slots = TaskSlotTable(self.num_slots)
        self.spark = SparkRunner(conf, self.num_slots, app_name=f"flinkbench-{self.tm_id}")
        self.python_environments = PythonEnvironments(os.path.join(working_dir(conf), "python", self.tm_id))
        self.executor = ThreadPoolExecutor(max_workers=self.num_slots * 2 + 2, thread_name_prefix="task")
        self.io_executor = ThreadPoolExecutor(max_workers=2, thread_name_prefix="checkpoint-io")
        # binds taskmanager.bind-host, advertises taskmanager.host (in RegisterTaskManager, for producers' peers)
        self.data_server = DataServer(conf.taskmanager_bind_host(), conf.get("taskmanager.data.port"), token,
                                      tls.server_context(conf, tls.INTERNAL))
        tls.warn_if_plain(conf, conf.taskmanager_bind_host(), "this TaskManager's data port", tls.INTERNAL)
        self.services = TaskManagerServices(conf, self.spark, self.executor, self.io_executor, self.data_server, token,
                                            tls.internal_client_context(conf), self.control, self.python_environments)
        self.tasks: dict[ExecutionAttemptId, Task] = {}
        self.log_tail = LogTail(STATUS_LOG_LINES)
        self.status_reporter = StatusReporter(self.tm_id, str(conf.get("spark.driver.memory")), self.spark.keeper,
                                              self.log_tail)
        self.stopping = False
        self.control.serve(self)

    # -- lifecycle ----------------------------------------------------------------------------
    async def run(self) -> None:
        logging.getLogger().addHandler(self.log_tail)
        await self.data_server.start()
        self.metrics_endpoint = start_endpoint(self.conf, lambda _admin: self._metric_families(),
                                               cluster_token_only(self.token), self.conf.get("taskmanager.host"))
        self._start_spark()
        await self.control.run()

    async def stop(self) -> None:
        self.stopping = True
        self.control.stop()
        for task in list(self.tasks.values()):
            task.cancel()
        await self.data_server.stop()
        if self.metrics_endpoint is not None:
            self.metrics_endpoint.stop()
        self.python_environments.remove()
        await asyncio.get_running_loop().run_in_executor(None, self.spark.stop)
        self.executor.shutdown(wait=False, cancel_futures=True)

    def _metric_families(self):
        """Flink's task metrics of every running task, as each last reported them (for Prometheus)."""
        return taskmanager_families(self.conf.get("taskmanager.host"), str(self.tm_id),
                                    [(task.tdd, task.metrics.last_report) for task in self.tasks.values()])

    # -- the Spark session --------------------------------------------------------------------
    def _start_spark(self) -> None:
        """Start the session in the background; tasks wait for it (TaskServices.spark_ready)."""
        loop = asyncio.get_running_loop()
        started = self.services.spark_started = loop.run_in_executor(self.executor, lambda: self.spark.session)
        started.add_done_callback(lambda _: self.control.heartbeat_now())  # slot requests may wait for it
        started.add_done_callback(lambda _: loop.call_later(WARM_UP_GRACE_S, self._warm_up_if_idle))

    @property
    def ready(self) -> bool:
        """Tasks deployed here start at once: the Spark session is up (or failed to start, so that its
        tasks fail naming why). The ResourceManager hands out the slots of ready TaskManagers only."""
        return self.services.spark_started is not None and self.services.spark_started.done()

    def _warm_up_if_idle(self) -> None:
        """Warm the new session up (runtime.taskmanager.warm_up) unless a job took a slot as soon as it was up.

        A fresh JVM's first bundle costs several times a later one. A job that was waiting for this
        TaskManager takes its slots at once and pays that in its first bundle, which a warm-up first would
        only lengthen (it costs about what it saves). Otherwise the warm-up pays it now, before a later job
        (a notebook's next cell, a failover onto a spare) needs the session: tasks placed during the warm-up
        wait for it to end rather than compete with it. A Spark Connect server's JVM is warm already."""
        started = self.services.spark_started
        failed = started is None or started.cancelled() or started.exception()
        if failed or self.slots.in_use or self.tasks or self.conf.get("spark.remote") or self.stopping:
            return
        loop = asyncio.get_running_loop()
        warmed = self.services.spark_warmed = loop.run_in_executor(self.executor, self._warm_up)
        warmed.add_done_callback(lambda _: loop.call_later(ARCHIVE_AFTER_IDLE_S, self._save_class_archive_if_idle))

    def _warm_up(self) -> None:
        """Blocking; a failed warm-up costs only time (a real fault shows in tasks)."""
        began = time.monotonic()
        try:
            warm_up(self.spark)
            log.info("Spark session warmed up in %.1f s", time.monotonic() - began)
        except Exception as err:  # noqa: BLE001 - logged; the session itself is up
            log.info("Spark warm-up failed: %s", err)

    def _save_class_archive_if_idle(self) -> None:
        """On the machine's first TaskManager ever, write the Spark class archive from this warmed session if
        no task came meanwhile: the JVM pauses for the dump, which a task must not wait for."""
        if self.tasks or self.stopping:
            return
        asyncio.get_running_loop().run_in_executor(self.executor, self._save_class_archive)

    def _save_class_archive(self) -> None:
        try:
            self.spark.save_class_archive()  # logs where it wrote it, or why not
        except Exception as err:  # noqa: BLE001 - without the archive, JVMs only start slower
            log.info("Spark class archive not written: %s", err)

    # -- what the control endpoint asks (ControlledRole) --------------------------------------
    def registration(self) -> RegisterTaskManager:
        return RegisterTaskManager(self.tm_id, self.conf.get("taskmanager.host"), self.data_server.port,
                                   self.num_slots, os.getpid(), self.spark.master, self.slots.report(), self.ready)

    def heartbeat(self) -> Heartbeat:
        return Heartbeat(self.tm_id, self.slots.report(), self.ready)

    def status(self) -> TaskManagerStatus:
        """The latest status read in the pool (its Spark JVM's metrics take round trips), the next read started."""
        return self.status_reporter.current(asyncio.get_running_loop(), self.executor)

    def routes(self) -> Mapping[type, Callable[[Any], None]]:
        return {RequestSlot: self._offer_slot, FreeSlot: self._free_slot, DeployTask: self._deploy,
                CancelTask: lambda m: self._cancel([m.attempt_id]),
                TriggerCheckpoint: lambda m: self._to_task(m, lambda task: task.trigger_checkpoint(m)),
                NotifyCheckpointComplete: lambda m: self._to_task(
                    m, lambda task: task.notify_checkpoint_complete(m.checkpoint_id)),
                NotifyCheckpointAborted: lambda m: self._to_task(
                    m, lambda task: task.notify_checkpoint_aborted(m.checkpoint_id))}

    def connection_lost(self) -> None:
        """Without a JobManager, running tasks cannot report or checkpoint: stop them and free the slots."""
        self._cancel(self.slots.free_all())

    # -- slots and tasks ----------------------------------------------------------------------
    def _offer_slot(self, request: RequestSlot) -> None:
        try:
            self.slots.allocate(request.slot_index, request.allocation_id, request.job_id)
            self.control.send(SlotOffer(request.allocation_id, request.job_id, request.slot_index, True))
        except SlotError as err:
            self.control.send(SlotOffer(request.allocation_id, request.job_id, request.slot_index, False, str(err)))

    def _free_slot(self, message: FreeSlot) -> None:
        try:
            self._cancel(self.slots.free(message.allocation_id))
        except SlotError:
            return

    def _cancel(self, attempts) -> None:
        for attempt in attempts:
            task = self.tasks.get(attempt)
            if task:
                task.cancel()

    def _deploy(self, message: DeployTask) -> None:
        tdd = message.descriptor
        try:
            slot = self.slots.by_allocation(tdd.allocation_id)
        except SlotError as err:
            self.control.send(TaskStateChanged(tdd.job_id, tdd.attempt_id, ExecutionState.FAILED,
                                               f"cannot deploy: {err}"))
            return
        slot.tasks.add(tdd.attempt_id)
        task = Task(tdd, self.services)
        self.tasks[tdd.attempt_id] = task
        asyncio.get_running_loop().create_task(self._run_task(task, slot))

    def _to_task(self, message, deliver: Callable[[Task], None]) -> None:
        """A checkpoint trigger or notification for one attempt; none if the attempt ended (the
        coordinator learns that from its state change)."""
        task = self.tasks.get(message.attempt_id)
        if task is not None:
            deliver(task)

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
