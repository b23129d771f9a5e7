"""A TaskManager in Flink's shapes (``/taskmanagers``, ``/taskmanagers/:id``): where it is and its slots,
and what Flink's dashboard draws of it (hardware, its JVM's memory and garbage collectors, the memory
model, each slot's resources), filled from its latest status report (runtime.taskmanager.status).

A Flinkbench TaskManager's JVM is its Spark driver's: its heap is the task heap, its metaspace the JVM
metaspace; it has no managed, network or framework memory (0). Each slot is one of ``local[slots]``'s
cores with an equal share of that heap. Before the first report the JVM figures are 0.
"""
from __future__ import annotations

import time

from runtime.jobmanager.rest import messages as m
from runtime.jobmanager.rest.spark_ui import proxy_path
from runtime.jobmanager.rest.convert import ms
from runtime.snapshots import TaskManagerSnapshot

MB = 1 << 20
GC_PREFIX = "Status.JVM.GarbageCollector."


def _jvm(tm: TaskManagerSnapshot) -> dict[str, float]:
    return tm.status.jvm if tm.status is not None else {}


def _int(jvm: dict[str, float], name: str) -> int:
    return int(jvm.get(name, 0))


def task_manager(tm: TaskManagerSnapshot) -> m.TaskManagerInfo:
    lost = tm.lost_reason is not None
    return m.TaskManagerInfo(
        id=tm.tm_id, path=f"{tm.host}:{tm.data_port}" if tm.data_port else tm.host, data_port=tm.data_port,
        time_since_last_heartbeat=ms(time.time() - tm.heartbeat_age_s) if tm.heartbeat_age_s is not None else None,
        slots_number=tm.slots_number, free_slots=tm.free_slots, host=tm.host, pid=tm.pid,
        spark_master=tm.spark_master, registered_at=ms(tm.registered_at) if tm.registered_at else None,
        state="LOST" if lost else "REGISTERED", reason=tm.lost_reason, lost_at=ms(tm.lost_at) if lost else None,
        slots=[m.SlotInfo(index=s.index, allocation_id=s.allocation_id, job_id=s.job_id, job_name=s.job_name,
                          tasks=list(s.tasks)) for s in tm.slots],
        hardware=hardware(tm), metrics=jvm_info(tm), memory_configuration=memory_configuration(tm),
        total_resource=resources(tm, tm.slots_number), free_resource=resources(tm, tm.free_slots),
        allocated_slots=[m.AllocatedSlotInfo(job_id=s.job_id, resource=resources(tm, 1))
                         for s in tm.slots if s.allocation_id is not None],
        spark_ui_url=proxy_path(tm.tm_id) if tm.status is not None and tm.status.spark_ui and not lost else None)


def hardware(tm: TaskManagerSnapshot) -> m.HardwareDescription:
    reported = tm.status.hardware if tm.status is not None else {}
    return m.HardwareDescription(cpu_cores=reported.get("cpuCores", 0), physical_memory=reported.get("physicalMemory", -1),
                                 free_memory=_int(_jvm(tm), "Status.JVM.Memory.Heap.Max"))


def jvm_info(tm: TaskManagerSnapshot) -> m.TaskManagerMetricsInfo:
    jvm = _jvm(tm)
    collectors = sorted({name[len(GC_PREFIX):].rsplit(".", 1)[0] for name in jvm if name.startswith(GC_PREFIX)})
    return m.TaskManagerMetricsInfo(
        heap_used=_int(jvm, "Status.JVM.Memory.Heap.Used"), heap_committed=_int(jvm, "Status.JVM.Memory.Heap.Committed"),
        heap_max=_int(jvm, "Status.JVM.Memory.Heap.Max"), non_heap_used=_int(jvm, "Status.JVM.Memory.NonHeap.Used"),
        non_heap_committed=_int(jvm, "Status.JVM.Memory.NonHeap.Committed"),
        non_heap_max=_int(jvm, "Status.JVM.Memory.NonHeap.Max"),
        direct_count=_int(jvm, "Status.JVM.Memory.Direct.Count"), direct_used=_int(jvm, "Status.JVM.Memory.Direct.MemoryUsed"),
        direct_max=_int(jvm, "Status.JVM.Memory.Direct.TotalCapacity"),
        mapped_count=_int(jvm, "Status.JVM.Memory.Mapped.Count"), mapped_used=_int(jvm, "Status.JVM.Memory.Mapped.MemoryUsed"),
        mapped_max=_int(jvm, "Status.JVM.Memory.Mapped.TotalCapacity"),
        garbage_collectors=[m.GarbageCollectorInfo(name=name, count=_int(jvm, f"{GC_PREFIX}{name}.Count"),
                                                   time=_int(jvm, f"{GC_PREFIX}{name}.Time")) for name in collectors])


def memory_configuration(tm: TaskManagerSnapshot) -> m.TaskExecutorMemoryConfiguration:
    jvm = _jvm(tm)
    heap = _int(jvm, "Status.JVM.Memory.Heap.Max")
    return m.TaskExecutorMemoryConfiguration(
        task_heap=heap, jvm_metaspace=max(0, _int(jvm, "Status.JVM.Memory.Metaspace.Max")), total_flink_memory=heap,
        total_process_memory=tm.status.rss_bytes if tm.status is not None else 0)


def resources(tm: TaskManagerSnapshot, slots: int) -> m.ResourceProfileInfo:
    """``slots`` slots' share of the TaskManager: a core each and an equal part of its Spark heap (MB)."""
    heap_mb = _int(_jvm(tm), "Status.JVM.Memory.Heap.Max") // MB
    share = heap_mb * slots // tm.slots_number if tm.slots_number else 0
    return m.ResourceProfileInfo(cpu_cores=float(slots), task_heap_memory=share)
