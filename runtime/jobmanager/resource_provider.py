"""Resource providers: who starts and stops TaskManagers for the ResourceManager (``resourcemanager.provider``).

- ``standalone``: TaskManagers are started by someone else (by hand, ``flinkbench taskmanager``, a
  LocalCluster) and register; nothing is provisioned.
- ``local``: the decisions of :class:`runtime.jobmanager.provisioning.Provisioner` carried out with
  TaskManager processes on this host, children of the JobManager (they die with it). It watches the
  ResourceManager's table (on every change and twice a second), starts ``flinkbench taskmanager``
  processes named by ``taskmanager.resource-id``, ends them when the machine says so, and notices at
  once when one of its processes exits. Only the leading JobManager provisions.

Every decision is a ``ResourceProviderDecision`` event on the event stream. Runs on the JobManager's loop.
"""
from __future__ import annotations

import asyncio
import collections
import logging
import signal
import sys
import time
from collections.abc import Callable
from typing import Protocol

from runtime import events
from runtime.child_process import ChildProcess, dynamic_properties, spawn_runtime
from runtime.config import Configuration
from runtime.ids import TaskManagerId
from runtime.jobmanager.provisioning import (Action, Announce, ClusterStopping, Departed, Observed, ProcessExited,
                                             Provisioner, ProvisioningPolicy, ReleaseTaskManager, StartTaskManager,
                                             StopTaskManager)

log = logging.getLogger(__name__)

POLL_INTERVAL_S = 0.2
STOP_GRACE_S = 10.0
DECISIONS_KEPT = 30


class ResourceProvider(Protocol):
    """What the JobManager asks of a provider; the ResourceManager only hears ``shortage`` from it."""

    kind: str

    def start(self, jobmanager_url: str, token_file: str) -> None: ...

    def shortage(self, needed: int) -> str | None: ...

    def describe(self) -> dict: ...

    def stop_provisioning(self) -> None: ...

    async def stop(self) -> None: ...


class StandaloneProvider:
    """TaskManagers come by themselves; the cluster can give what is registered."""

    kind = "standalone"

    def start(self, jobmanager_url: str, token_file: str) -> None:
        pass

    def shortage(self, needed: int) -> str | None:
        return None  # the ResourceManager's own count of registered slots says it all

    def describe(self) -> dict:
        return {"type": self.kind}

    def stop_provisioning(self) -> None:
        pass

    async def stop(self) -> None:
        pass


class LocalProvider:
    """Starts TaskManager processes on this host as the Provisioner decides."""

    kind = "local"

    def __init__(self, conf: Configuration, rm, bus, working_dir: str, is_leader: Callable[[], bool],
                 python: str | None = None, clock: Callable[[], float] = time.monotonic):
        self.conf, self.rm, self.bus = conf, rm, bus
        self.working_dir, self.python, self.clock = working_dir, python or sys.executable, clock
        self.is_leader = is_leader
        self.policy = ProvisioningPolicy(conf.get("taskmanager.numberOfTaskSlots"),
                                         conf.get("resourcemanager.local.max-taskmanagers"),
                                         conf.get("resourcemanager.taskmanager-timeout"),
                                         conf.get("resourcemanager.standby-taskmanagers"))
        self.machine = Provisioner(self.policy, lambda: str(TaskManagerId.new()))
        self.processes: dict[str, ChildProcess] = {}
        self.decisions: collections.deque[dict] = collections.deque(maxlen=DECISIONS_KEPT)
        self._stopping: dict[str, str] = {}  # tm id -> why it is being stopped
        self._url = self._token_file = ""
        self._scheduled = False
        self._poller: asyncio.Task | None = None

    # -- lifecycle ----------------------------------------------------------------------------
    def start(self, jobmanager_url: str, token_file: str) -> None:
        self._url, self._token_file = jobmanager_url, token_file
        self.rm.on_change(self._schedule)
        self.rm.on_task_manager_departure(self._departed)
        self.rm.shortage_note = self.shortage
        self._poller = asyncio.get_running_loop().create_task(self._poll())
        self._schedule()

    def stop_provisioning(self) -> None:
        """The cluster is stopping: start nothing from now on (its TaskManagers leaving must not be replaced)."""
        self._apply(self.machine.handle(ClusterStopping(self.clock())))

    async def stop(self) -> None:
        """End every TaskManager this provider started (SIGTERM, then SIGKILL after a grace period)."""
        if self._poller is not None:
            self._poller.cancel()
        children = list(self.processes.values())
        for child in children:
            child.terminate()
        deadline = time.monotonic() + STOP_GRACE_S
        while any(c.alive() for c in children) and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        for child in children:
            child.kill()

    # -- observing ----------------------------------------------------------------------------
    def _schedule(self) -> None:
        """Evaluate soon, once, on the loop (never inside the ResourceManager's own call)."""
        if not self._scheduled:
            self._scheduled = True
            asyncio.get_running_loop().call_soon(self._evaluate)

    def _evaluate(self) -> None:
        self._scheduled = False
        if not self.is_leader():
            return
        usage = {str(tm_id): usage for tm_id, usage in self.rm.slot_usage().items()}
        self._apply(self.machine.handle(Observed(self.clock(), self.rm.pending_slot_count, usage)))

    async def _poll(self) -> None:
        while True:
            await asyncio.sleep(POLL_INTERVAL_S)
            for tm_id, child in list(self.processes.items()):
                code = child.popen.poll()
                if code is not None:
                    self._exited(tm_id, child, code)
            self._evaluate()

    def _departed(self, tm_id: str) -> None:
        """A TaskManager deregistered (stopped on purpose): not lost, not replaced; one of ours then exits quietly."""
        if tm_id in self.processes:
            self._stopping.setdefault(tm_id, "left on purpose")
        self._apply(self.machine.handle(Departed(tm_id, self.clock())))

    def _exited(self, tm_id: str, child: ChildProcess, code: int) -> None:
        del self.processes[tm_id]
        reason = self._stopping.pop(tm_id, None)
        if reason is not None:
            self._announce("stopped", tm_id, f"{reason}; exited with code {code}")
            return
        log.warning("TaskManager %s (pid %d) exited with code %d; its log ends:\n%s", tm_id, child.pid, code,
                    child.log_tail(10))
        if self.is_leader():
            self._apply(self.machine.handle(ProcessExited(tm_id, code, self.clock())))

    # -- acting -------------------------------------------------------------------------------
    def _apply(self, actions: list[Action]) -> None:
        for action in actions:
            if isinstance(action, StartTaskManager):
                self._start_taskmanager(action)
            elif isinstance(action, StopTaskManager):
                self._stop_taskmanager(action)
            elif isinstance(action, ReleaseTaskManager):
                self.rm.release_task_manager(TaskManagerId(action.tm_id), action.reason)
            elif isinstance(action, Announce):
                self._announce(action.decision, action.tm_id, action.reason)

    def _start_taskmanager(self, action: StartTaskManager) -> None:
        conf = {**self.conf.as_strings(), "taskmanager.resource-id": action.tm_id}
        args = ["taskmanager", "--jobmanager", self._url, "--token-file", self._token_file,
                "--slots", str(self.policy.slots_per_taskmanager), *dynamic_properties(conf)]
        try:
            child = spawn_runtime("taskmanager", f"taskmanager-{action.tm_id}", args, self.working_dir, self.python)
        except OSError as err:
            log.error("cannot start TaskManager %s: %s", action.tm_id, err)
            self._apply(self.machine.handle(ProcessExited(action.tm_id, None, self.clock())))
            return
        self.processes[action.tm_id] = child
        self._announce("started", action.tm_id, f"pid {child.pid}, log {child.log_path}")

    def _stop_taskmanager(self, action: StopTaskManager) -> None:
        """Out of the ResourceManager's table first (so no slot of it is handed out), then SIGTERM."""
        if action.release:
            self.rm.release_task_manager(TaskManagerId(action.tm_id), f"TaskManager {action.tm_id} stopped: "
                                                                      f"{action.reason}", lost=False)
        child = self.processes.get(action.tm_id)
        if child is None:
            return
        self._stopping[action.tm_id] = action.reason
        child.terminate()
        asyncio.get_running_loop().call_later(STOP_GRACE_S, child.signal_group, signal.SIGKILL)

    def _announce(self, decision: str, tm_id: str | None, reason: str) -> None:
        log.info("resource provider: %s %s: %s", decision, tm_id or "", reason)
        event = events.ResourceProviderDecision(decision, TaskManagerId(tm_id) if tm_id else None, reason,
                                                self.policy.slots_per_taskmanager)
        self.decisions.append({"decision": decision, "tm_id": tm_id, "reason": reason, "ts": time.time(),
                               "slots": self.policy.slots_per_taskmanager})
        self.bus.publish(event)

    # -- views --------------------------------------------------------------------------------
    def shortage(self, needed: int) -> str | None:
        if self.machine.can_give() >= needed:
            return None
        return self.machine.refusal(needed)

    def describe(self) -> dict:
        starting = [tm_id for tm_id, tm in self.machine.taskmanagers.items() if tm.starting]
        return {"type": self.kind, "max-taskmanagers": self.policy.max_taskmanagers,
                "standby-taskmanagers": self.policy.standby, "taskmanager-timeout": self.policy.idle_timeout,
                "slots-per-taskmanager": self.policy.slots_per_taskmanager, "can-give": self.machine.can_give(),
                "starting": starting, "started": sorted(self.processes), "decisions": list(self.decisions)}


def resource_provider(conf: Configuration, rm, bus, working_dir: str, is_leader: Callable[[], bool]) -> ResourceProvider:
    """The provider ``resourcemanager.provider`` names."""
    if conf.get("resourcemanager.provider") == "local":
        return LocalProvider(conf, rm, bus, working_dir, is_leader)
    return StandaloneProvider()
