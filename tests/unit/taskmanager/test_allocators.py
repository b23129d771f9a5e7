"""The TaskManager process's allocators follow their configuration keys (each case in a fresh interpreter:
the Arrow pool and malloc's arenas are process-wide)."""
import json
import subprocess
import sys

import pytest

from runtime.config import ConfigError, Configuration
from runtime.taskmanager import allocators

PROBE = """
import json, os, sys
import pyarrow as pa
from runtime.config import Configuration
from runtime.taskmanager import allocators
os.environ.pop("MALLOC_ARENA_MAX", None)
allocators.configure(Configuration(json.loads(sys.argv[1])))
print(json.dumps({"pool": pa.default_memory_pool().backend_name, "arenas": os.environ.get("MALLOC_ARENA_MAX")}))
"""


def _configured(**conf) -> dict:
    out = subprocess.run([sys.executable, "-c", PROBE, json.dumps(conf)], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def test_the_defaults_use_the_system_allocator_and_two_arenas_for_the_spark_jvm_too():
    assert _configured() == {"pool": "system", "arenas": "2"}


def test_each_key_does_what_it_says():
    assert _configured(**{"taskmanager.memory.arrow-allocator": "mimalloc",
                          "taskmanager.memory.malloc-arenas": 0}) == {"pool": "mimalloc", "arenas": None}


def test_glibc_accepts_the_arena_limit():
    assert allocators._mallopt(allocators.M_ARENA_MAX, 2), "mallopt(M_ARENA_MAX) refused"


def test_an_unknown_allocator_or_a_negative_arena_count_is_refused_by_name():
    with pytest.raises(ConfigError, match="taskmanager.memory.arrow-allocator"):
        Configuration({"taskmanager.memory.arrow-allocator": "tcmalloc"})
    with pytest.raises(ConfigError, match="taskmanager.memory.malloc-arenas"):
        Configuration({"taskmanager.memory.malloc-arenas": -1})


NATIVE_PROBE = """
import json, logging, os, sys
logging.basicConfig(level=logging.WARNING)
os.environ.pop("ARROW_DEFAULT_MEMORY_POOL", None)
from runtime.config import Configuration
from runtime.taskmanager import allocators
conf = Configuration(json.loads(sys.argv[1]))
if sys.argv[2] == "prepared":
    allocators.prepare_environment(conf)
import pyarrow as pa
native = pa.default_memory_pool().backend_name  # Arrow's C++ default (nothing set yet)
allocators.configure(conf)
print(json.dumps({"native": native}))
"""


def _native(prepared: bool, **conf) -> tuple[str, str]:
    out = subprocess.run([sys.executable, "-c", NATIVE_PROBE, json.dumps(conf), "prepared" if prepared else "late"],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout)["native"], out.stderr


def test_arrows_own_allocations_follow_the_key_when_set_before_pyarrow_loads_and_a_late_one_is_reported():
    assert _native(True) == ("system", "")
    assert _native(True, **{"taskmanager.memory.arrow-allocator": "mimalloc"}) == ("mimalloc", "")
    native, log = _native(False)
    assert native != "system", "pyarrow's own default is a caching allocator: the case the variable is for"
    assert "pyarrow was loaded before taskmanager.memory.arrow-allocator" in log
