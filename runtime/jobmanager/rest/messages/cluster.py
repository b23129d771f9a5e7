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
class HardwareDescription:
    cpu_cores: int = F("cpuCores")
    physical_memory: int = F("physicalMemory", doc="bytes; -1 when unknown")
    free_memory: int = F("freeMemory", doc="the Spark JVM's largest heap (bytes), as Flink reports its own JVM's")
    managed_memory: int = F("managedMemory", default=0, doc="Flinkbench has no managed memory")


@message
class GarbageCollectorInfo:
    name: str = F("name")
    count: int = F("count")
    time: int = F("time", doc="ms")


@message
class TaskManagerMetricsInfo:
    """The TaskManager's Spark JVM as its latest status report described it (0 before the first)."""
    heap_used: int = F("heapUsed")
    heap_committed: int = F("heapCommitted")
    heap_max: int = F("heapMax")
    non_heap_used: int = F("nonHeapUsed")
    non_heap_committed: int = F("nonHeapCommitted")
    non_heap_max: int = F("nonHeapMax")
    direct_count: int = F("directCount")
    direct_used: int = F("directUsed")
    direct_max: int = F("directMax")
    mapped_count: int = F("mappedCount")
    mapped_used: int = F("mappedUsed")
    mapped_max: int = F("mappedMax")
    memory_segments_available: int = F("memorySegmentsAvailable", default=0)
    memory_segments_total: int = F("memorySegmentsTotal", default=0)
    netty_shuffle_memory_segments_available: int = F("nettyShuffleMemorySegmentsAvailable", default=0)
    netty_shuffle_memory_segments_used: int = F("nettyShuffleMemorySegmentsUsed", default=0)
    netty_shuffle_memory_segments_total: int = F("nettyShuffleMemorySegmentsTotal", default=0)
    netty_shuffle_memory_available: int = F("nettyShuffleMemoryAvailable", default=0)
    netty_shuffle_memory_used: int = F("nettyShuffleMemoryUsed", default=0)
    netty_shuffle_memory_total: int = F("nettyShuffleMemoryTotal", default=0)
    garbage_collectors: list[GarbageCollectorInfo] = F("garbageCollectors")


@message
class TaskExecutorMemoryConfiguration:
    """Flink's memory model filled from what a Flinkbench TaskManager has: its Spark JVM's heap is the task
    heap and its metaspace the JVM metaspace; it has no framework, managed or network memory (0)."""
    framework_heap: int = F("frameworkHeap", default=0)
    task_heap: int = F("taskHeap")
    framework_off_heap: int = F("frameworkOffHeap", default=0)
    task_off_heap: int = F("taskOffHeap", default=0)
    network_memory: int = F("networkMemory", default=0)
    managed_memory: int = F("managedMemory", default=0)
    jvm_metaspace: int = F("jvmMetaspace")
    jvm_overhead: int = F("jvmOverhead", default=0)
    total_flink_memory: int = F("totalFlinkMemory")
    total_process_memory: int = F("totalProcessMemory", doc="resident memory of the process and its Spark JVM")


@message
class ResourceProfileInfo:
    """A slot's share: one core and an equal part of the Spark JVM's heap (MB), as local[slots] divides them."""
    cpu_cores: float = F("cpuCores")
    task_heap_memory: int = F("taskHeapMemory")
    task_off_heap_memory: int = F("taskOffHeapMemory", default=0)
    managed_memory: int = F("managedMemory", default=0)
    network_memory: int = F("networkMemory", default=0)
    extended_resources: dict[str, float] = F("extendedResources", factory=dict)


@message
class AllocatedSlotInfo:
    job_id: str | None = F("jobId")
    resource: ResourceProfileInfo = F("resource")


@message
class TaskManagerInfo:
    id: str = F("id")
    path: str = F("path")
    data_port: int | None = F("dataPort")
    jmx_port: int = F("jmxPort", default=-1)
    time_since_last_heartbeat: int | None = F("timeSinceLastHeartbeat",
                                              doc="when the last heartbeat arrived (ms since the epoch), as Flink has it")
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
    hardware: HardwareDescription = F("hardware")
    metrics: TaskManagerMetricsInfo = F("metrics")
    memory_configuration: TaskExecutorMemoryConfiguration = F("memoryConfiguration")
    total_resource: ResourceProfileInfo = F("totalResource")
    free_resource: ResourceProfileInfo = F("freeResource")
    allocated_slots: list[AllocatedSlotInfo] = F("allocatedSlots")
    spark_ui_url: str | None = F("sparkUiUrl", default=None, omit_none=True,
                                 doc="its Spark UI through this REST API (relative to its root), when its driver serves one")


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
