"""How a TaskManager process and its Spark JVM allocate native memory: chosen for a small footprint.

Two allocators keep memory that a TaskManager has freed, and a TaskManager frees a lot: every bundle's
Arrow tables live for one step of its task. Arrow's bundled allocator (mimalloc in pyarrow's wheels)
holds freed pages for reuse; the system allocator gives large buffers back to the kernel. glibc's
malloc gives each thread that allocates an arena of its own (up to eight per core), each keeping its
freed memory; the Spark JVM allocates natively from dozens of threads. Measured on the clicks job (two
TaskManagers, throughput then latency runs): each TaskManager's Python process peaked at 200 MB with
mimalloc and glibc's default arenas, 155 MB with the system allocator and two arenas, at the same
throughput.

Arrow's C++ code (its IPC reader, compute functions, Acero) allocates from the pool that
``ARROW_DEFAULT_MEMORY_POOL`` names, read once when pyarrow loads; pyarrow's own default is mimalloc, which
reserved a 1 GiB region in each TaskManager and kept about 50 MB of it resident after the clicks job's bundles
had long been freed. So ``prepare_environment`` sets that variable from the same key before the TaskManager
process imports pyarrow (``flinkbench taskmanager`` calls it first), and ``configure`` warns where pyarrow
came first. ``configure`` runs once, first thing in the TaskManager process: before its Spark JVM starts,
so the JVM (and any Python worker Spark starts) inherits ``MALLOC_ARENA_MAX`` through the environment.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import logging
import os

from runtime.config import ConfigError, Configuration

log = logging.getLogger(__name__)

M_ARENA_MAX = -8  # glibc's mallopt parameter number (malloc.h)


def prepare_environment(conf: Configuration) -> None:
    """Name ``taskmanager.memory.arrow-allocator`` for Arrow's C++ allocations: call before pyarrow loads (it
    wins over an ARROW_DEFAULT_MEMORY_POOL of the caller's, as the configuration key is the documented one)."""
    os.environ["ARROW_DEFAULT_MEMORY_POOL"] = conf.get("taskmanager.memory.arrow-allocator")


def configure(conf: Configuration) -> None:
    """Apply ``taskmanager.memory.arrow-allocator`` and ``taskmanager.memory.malloc-arenas`` to this process."""
    import pyarrow as pa

    wanted = conf.get("taskmanager.memory.arrow-allocator")
    native = pa.default_memory_pool().backend_name  # the C++ default, until set_memory_pool below
    if native != wanted:
        log.warning("pyarrow was loaded before taskmanager.memory.arrow-allocator could name its C++ allocator: "
                    "Arrow's own allocations use %s, the TaskManager's %s", native, wanted)
    pa.set_memory_pool(arrow_pool(wanted))
    arenas = conf.get("taskmanager.memory.malloc-arenas")
    if arenas:
        os.environ["MALLOC_ARENA_MAX"] = str(arenas)  # for the Spark JVM, started later from this process
        if not _mallopt(M_ARENA_MAX, arenas):
            log.warning("this C library does not limit malloc arenas; taskmanager.memory.malloc-arenas %d "
                        "applies to the Spark JVM only", arenas)


def arrow_pool(name: str):
    """The Arrow memory pool called ``name``; a pool this pyarrow was built without is a ConfigError."""
    import pyarrow as pa

    factory = {"system": pa.system_memory_pool, "mimalloc": pa.mimalloc_memory_pool,
               "jemalloc": pa.jemalloc_memory_pool}[name]
    try:
        return factory()
    except NotImplementedError:
        raise ConfigError(f"config key 'taskmanager.memory.arrow-allocator': this pyarrow {pa.__version__} "
                          f"was built without {name}; choose system") from None


def _mallopt(parameter: int, value: int) -> bool:
    """glibc's mallopt; False where the C library has none (musl) or refuses the value."""
    libc = ctypes.CDLL(ctypes.util.find_library("c") or None)
    mallopt = getattr(libc, "mallopt", None)
    return bool(mallopt and mallopt(parameter, value) == 1)
