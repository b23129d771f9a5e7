"""The cluster: overview, configuration, JobManagers and TaskManagers."""
from __future__ import annotations


from runtime.jobmanager.rest.fields import F, message

#: the Flink release whose REST API this one follows (``flink-version`` on /overview and /config)
FLINK_REST_VERSION = "2.3.0"


# -- cluster ---------------------------------------------------------------------------------
@message
class LeaderInfo:
    url: str = F("url")
    session_id: str | None = F("session-id")


@message
class JobManagerInfo:
    id: str = F("id")
    address: str = F("address")
    url: str = F("url")
    pid: int | None = F("pid")
    role: str = F("role", doc="leader or standby")


@message
class JobManagersInfo:
    leader: LeaderInfo | None = F("leader")
    jobmanagers: list[JobManagerInfo] = F("jobmanagers")
    role: str | None = F("role", default=None, doc="the answering JobManager's own role: leader, standby or suspended")


@message
class ClusterOverviewWithVersion:
    taskmanagers: int = F("taskmanagers")
    slots_total: int = F("slots-total")
    slots_available: int = F("slots-available")
    jobs_running: int = F("jobs-running")
    jobs_finished: int = F("jobs-finished")
    jobs_cancelled: int = F("jobs-cancelled")
    jobs_failed: int = F("jobs-failed")
    flink_version: str = F("flink-version", default=FLINK_REST_VERSION, doc="the Flink REST API version followed")
    flink_commit: str = F("flink-commit", default="")
    flinkbench_version: str = F("flinkbench-version")
    leader: LeaderInfo | None = F("leader")
    jobmanagers: list[JobManagerInfo] = F("jobmanagers")
    role: str | None = F("role", default=None, doc="the answering JobManager's own role: leader, standby or suspended")


@message
class Features:
    web_submit: bool = F("web-submit", default=False)
    web_cancel: bool = F("web-cancel", default=True)
    web_rescale: bool = F("web-rescale", default=False)
    web_history: bool = F("web-history", default=False)
    fault_injection: bool = F("fault-injection", default=False, doc="TaskManagers and JobManagers may be killed over REST")


@message
class ConfigEntry:
    key: str = F("key")
    value: str = F("value")


@message
class DashboardConfiguration:
    refresh_interval: int = F("refresh-interval", default=3000)
    timezone_name: str = F("timezone-name", default="UTC")
    timezone_offset: int = F("timezone-offset", default=0)
    flink_version: str = F("flink-version", default=FLINK_REST_VERSION)
    flink_revision: str = F("flink-revision", default="")
    features: Features = F("features")
    entries: list[ConfigEntry] = F("entries", doc="the configuration in force, as /jobmanager/config")


@message
class SlotInfo:
    index: int = F("index")
    allocation_id: str | None = F("allocation-id")
    job_id: str | None = F("job-id")
    job_name: str = F("job-name")
    tasks: list[str] = F("tasks")


@message
class TaskManagerInfo:
    id: str = F("id")
    path: str = F("path")
    data_port: int | None = F("dataPort")
    jmx_port: int = F("jmxPort", default=-1)
    time_since_last_heartbeat: int | None = F("timeSinceLastHeartbeat", doc="ms")
    slots_number: int = F("slotsNumber")
    free_slots: int = F("freeSlots")
    blocked: bool = F("blocked", default=False)
    host: str = F("host")
    pid: int | None = F("pid")
    spark_master: str = F("sparkMaster")
    registered_at: int | None = F("registeredAt", doc="ms since the epoch")
    state: str = F("state", doc="REGISTERED or LOST")
    reason: str | None = F("reason", default=None, doc="why a LOST TaskManager was lost", omit_none=True)
    lost_at: int | None = F("lostAt", default=None, omit_none=True)
    slots: list[SlotInfo] = F("slots")


@message
class TaskManagersInfo:
    taskmanagers: list[TaskManagerInfo] = F("taskmanagers")


@message
class KillResponse:
    killed: str = F("killed")
    pid: int | None = F("pid")


@message
class HoldResponse:
    held_s: float = F("held-s")
    pid: int = F("pid")


@message
class HealthStatus:
    status: str = F("status")


@message
class LoginLinkRequest:
    next: str | None = F("next", default=None,
                         doc="the dashboard page to open once logged in, e.g. /dashboard?job=<id> (default /dashboard)")


@message
class LoginLink:
    url: str = F("url", doc="opens the web dashboard once, logged in; the token is not in it")
    expires_in_s: float = F("expires-in-s", doc="seconds the link stays usable if not opened")
