"""Fail when imports between the modules of runtime/ and kernel_magics/ run in a circle or back up a layer.

    python scripts/check_imports.py

Every import counts: at the top of a module, inside a function (a lazy import is still a dependency)
and under ``if TYPE_CHECKING``. ``from package import name`` depends on the module ``package.name`` when
there is one, else on the package's ``__init__``. A module may import modules of its own layer and of
the layers below it (LAYERS, lowest first), never of a layer above; and no module may reach itself
again through its imports. A third rule keeps the TaskManager's fields its own: inside
runtime/taskmanager/ only its own module (OWN_MODULE) imports it or reads attributes through a name
that holds it (tasks see it through runtime.taskmanager.services.TaskServices).
"""
from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("runtime", "kernel_magics")

# Lowest first. A module belongs to the layer of the longest prefix that names it (the module itself or its
# package); a name ending in "$" names that one module alone (runtime$: the package's own __init__).
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("foundation: ids, errors, configuration, messages, wire formats", (
        "runtime.errors", "runtime.ids", "runtime.version", "runtime.keygroups", "runtime.arrow_ipc", "runtime.timezones",
        "runtime.process_info", "runtime.child_process", "runtime.changelog", "runtime.security", "runtime.java",
        "runtime.codec", "runtime.config_values", "runtime.config", "runtime.states", "runtime.ddl", "runtime.fileio",
        "runtime.tls", "runtime.python_dependencies", "runtime.jobgraph", "runtime.chaining", "runtime.messages",
        "runtime.data_messages", "runtime.events", "runtime.gateways", "runtime.routing", "runtime.api_hints",
        "runtime.spark_stages", "runtime.process_logs", "runtime.stop_signal", "runtime.users")),
    ("services every role uses: checkpoints, HA, connectors, snapshots, metrics, live views, pattern matching", (
        "runtime.checkpoint", "runtime.ha", "runtime.connectors", "runtime.snapshots", "runtime.metrics",
        "runtime.views", "runtime.cep")),
    ("the REST client and a job's handle", ("runtime.client", "runtime.job_client")),
    ("the DataStream API, and Python functions as PyFlink writes them", ("runtime.api", "runtime.udf")),
    ("the SQL layer (plans made into DataStreams)", ("runtime.sql",)),
    ("the Table API (a front over the SQL layer)", ("runtime.table",)),
    ("the roles, running what the APIs describe", ("runtime.jobmanager", "runtime.taskmanager", "runtime.history")),
    ("entry points: embedded cluster, command line, examples", (
        "runtime.cluster", "runtime.cli", "runtime.examples", "runtime.demo", "runtime$")),
    ("the notebook side", ("kernel_magics",)),
]

TASKMANAGER_PACKAGE = "runtime.taskmanager"
OWN_MODULE = "runtime.taskmanager.task_manager"
TASKMANAGER_NAMES = ("tm", "task_manager", "taskmanager")  # names that would hold the TaskManager


def modules(root: Path = ROOT) -> dict[str, Path]:
    """Every module of PACKAGES by dotted name (a package by its own name, for its ``__init__``)."""
    found = {}
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def imports(name: str, path: Path, known: dict[str, Path]) -> Iterator[tuple[str, int]]:
    """(module of ours imported, line) for every import in ``path``, wherever it stands."""
    base = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                module = ".".join(base[:len(base) - node.level + 1] + ([module] if module else []))
            targets = [f"{module}.{a.name}" if f"{module}.{a.name}" in known else module for a in node.names]
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                yield target, node.lineno


def layer_of(module: str) -> int:
    best, where = -1, -1
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            exact = prefix.endswith("$")
            prefix = prefix.rstrip("$")
            if (module == prefix or (not exact and module.startswith(prefix + "."))) and len(prefix) > best:
                best, where = len(prefix), index
    return where


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return found


def taskmanager_reads(name: str, path: Path, root: Path = ROOT) -> Iterator[str]:
    """Where a module of the TaskManager's package other than its own reaches into the TaskManager."""
    if not name.startswith(TASKMANAGER_PACKAGE + ".") or name == OWN_MODULE:
        return
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Attribute):
            holder = node.value.attr if isinstance(node.value, ast.Attribute) else getattr(node.value, "id", None)
            if holder in TASKMANAGER_NAMES:
                yield f"{path.relative_to(root)}:{node.lineno}: reads {holder}.{node.attr}"
        elif isinstance(node, ast.arg) and node.arg in TASKMANAGER_NAMES:
            yield f"{path.relative_to(root)}:{node.lineno}: takes the TaskManager as '{node.arg}'"


def problems(root: Path = ROOT) -> list[str]:
    known = modules(root)
    graph: dict[str, set[str]] = {name: set() for name in known}
    found = []
    for name, path in known.items():
        if layer_of(name) < 0:
            found.append(f"{path.relative_to(root)}: in no layer; add it to LAYERS in {Path(__file__).name}")
        for target, line in sorted(set(imports(name, path, known))):
            graph[name].add(target)
            if min(layer_of(name), layer_of(target)) >= 0 and layer_of(target) > layer_of(name):
                found.append(f"{path.relative_to(root)}:{line}: imports {target} ({LAYERS[layer_of(target)][0]}) "
                             f"from below it ({LAYERS[layer_of(name)][0]})")
            if target == OWN_MODULE and name.startswith(TASKMANAGER_PACKAGE + "."):
                found.append(f"{path.relative_to(root)}:{line}: imports the TaskManager; tasks use TaskServices")
        found += taskmanager_reads(name, path, root)
    for group in circles(graph):
        ties = [f"{a} -> {b}" for a in group for b in sorted(graph[a]) if b in group]
        found.append(f"circle of {len(group)} modules: " + "; ".join(ties))
    return found


def main() -> int:
    found = problems()
    for line in found:
        print(line)
    print(f"check_imports: {len(modules())} modules in {len(LAYERS)} layers, {len(found)} problems")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
