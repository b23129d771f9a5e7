"""REST handlers for the cluster: overview, configuration, JobManagers, TaskManagers, fault injection,
and the dashboard's one-time login links."""
from __future__ import annotations

import asyncio
import os
import signal

import tornado.web

from runtime.jobmanager.logins import login_path
from runtime.jobmanager.rest import convert
from runtime.jobmanager.rest import messages as m
from runtime.jobmanager.rest.gate import presented_token
from runtime.jobmanager.rest.base import ApiHandler, HTTPError, Query, operation
from runtime.jobmanager.rest.taskmanager_view import task_manager


class OverviewHandler(ApiHandler):
    standby_serves = True

    @operation("The cluster: TaskManagers, slots, jobs by state, versions, and which JobManager leads.",
               m.ClusterOverviewWithVersion)
    def get(self):
        return convert.cluster_overview(self.gateway.cluster_overview(),
                                        convert.leadership(self.ctx.leader.leadership_view()))


class JobManagersHandler(ApiHandler):
    standby_serves = True

    @operation("Every live JobManager (leader or standby) and the leader.", m.JobManagersInfo)
    def get(self):
        return convert.leadership(self.ctx.leader.leadership_view())


class ConfigHandler(ApiHandler):
    standby_serves = True

    @operation("The web UI's configuration: refresh interval, version, features, and the configuration in force.",
               m.DashboardConfiguration)
    def get(self):
        conf = self.ctx.conf
        return m.DashboardConfiguration(
            features=m.Features(fault_injection=bool(conf.get("cluster.fault-injection.enabled"))),
            entries=[m.ConfigEntry(key=e["key"], value=e["value"]) for e in conf.as_flink_entries()])


class JobManagerConfigHandler(ApiHandler):
    standby_serves = True

    @operation("The cluster configuration in force, as Flink's list of key and value.", list[m.ConfigEntry])
    def get(self):
        return [m.ConfigEntry(key=e["key"], value=e["value"]) for e in self.ctx.conf.as_flink_entries()]


class TaskManagersHandler(ApiHandler):
    @operation("Every TaskManager, registered or lost, with its slots.", m.TaskManagersInfo)
    def get(self):
        return m.TaskManagersInfo(taskmanagers=[task_manager(tm) for tm in self.gateway.request_task_managers()])


class TaskManagerHandler(ApiHandler):
    @operation("One TaskManager with its slots.", m.TaskManagerInfo)
    def get(self, taskmanagerid):
        return task_manager(self.gateway.request_task_manager(taskmanagerid))


class FaultInjectionHandler(ApiHandler):
    """Kill a TaskManager or this JobManager, for teaching failover; off unless the cluster enables it, and
    an admin's only (one user's fault would be every user's)."""

    admin_only = "fault injection"

    def prepare(self) -> None:
        super().prepare()
        if not self.ctx.conf.get("cluster.fault-injection.enabled"):
            raise HTTPError(403, "fault injection is disabled on this cluster (set cluster.fault-injection.enabled: true)")


class KillTaskManagerHandler(FaultInjectionHandler):
    @operation("Kill a TaskManager's process with SIGKILL (cluster.fault-injection.enabled only).",
               m.KillResponse, status=202)
    def post(self, taskmanagerid):
        tm = self.gateway.request_task_manager(taskmanagerid)
        if tm.lost_reason is not None or tm.pid is None:
            raise HTTPError(404, f"TaskManager {taskmanagerid} not found or already lost")
        kill(tm.pid)
        return m.KillResponse(killed=tm.tm_id, pid=tm.pid)


class KillJobManagerHandler(FaultInjectionHandler):
    @operation("Kill this JobManager's process with SIGKILL (cluster.fault-injection.enabled only).",
               m.KillResponse, status=202)
    def post(self):
        asyncio.get_running_loop().call_later(0.1, kill, os.getpid())
        return m.KillResponse(killed="jobmanager", pid=os.getpid())


class HoldElectionHandler(FaultInjectionHandler):
    standby_serves = True

    @operation("Hold this JobManager's leader election for `seconds` (cluster.fault-injection.enabled only): "
               "rounds and the HA store's connection events wait, as in a leader woken from a pause whose timers "
               "act before its election notices the lost lease. Its fences refuse what it writes meanwhile.",
               m.HoldResponse, status=202, query=(Query("seconds", "how long, at most 600; 0 ends a hold now", float),))
    def post(self):
        try:
            seconds = float(self.get_query_argument("seconds"))
        except (tornado.web.MissingArgumentError, ValueError):
            raise HTTPError(400, "query parameter 'seconds' must be a number of seconds") from None
        if not 0 <= seconds <= 600:
            raise HTTPError(400, f"query parameter 'seconds' must be from 0 to 600, got {seconds:g}")
        self.ctx.leader.hold_election(seconds)
        return m.HoldResponse(held_s=seconds, pid=os.getpid())


def kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


class HealthHandler(ApiHandler):
    """The one route open without the token: says only that the process answers."""
    standby_serves = True

    @operation("Liveness: the process answers (no token needed).", m.HealthStatus)
    def get(self):
        return m.HealthStatus(status="ok")


class LoginLinksHandler(ApiHandler):
    """A browser link to the dashboard for whoever holds the token (runtime.jobmanager.logins says why)."""
    standby_serves = True

    @operation("A link that opens the web dashboard once, logged in (an HTTP-only cookie), with no token in it; "
               "it expires after expires-in-s.", m.LoginLink, status=201, request=m.LoginLinkRequest)
    def post(self):
        wanted = self.body(m.LoginLinkRequest)
        code = self.ctx.logins.issue(presented_token(self.request) or "")  # a user's link logs in as that user
        # The address the caller reached this JobManager at is the one its browser is about to open.
        base = f"{self.request.protocol}://{self.request.host}"
        return m.LoginLink(url=base + login_path(wanted.next, code), expires_in_s=self.ctx.logins.ttl_s)
