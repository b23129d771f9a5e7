"""The ``flinkbench`` subcommands, by name: the CLI dispatches through this table, and the hints that show a
``flinkbench`` line (runtime.api_hints) are handed it, so they name only commands this installation has.

Each maps to its function as ``module.function`` under runtime.cli: a module is imported only for its own
commands (a TaskManager's process sets up Arrow's allocator before anything imports pyarrow, which the job
commands' module does: runtime.taskmanager.allocators).
"""
from __future__ import annotations

COMMANDS = {"jobmanager": "processes.jobmanager", "taskmanager": "processes.taskmanager", "cluster": "processes.cluster",
            "historyserver": "processes.historyserver",
            "run": "jobs.run", "list": "jobs.list_jobs", "cancel": "jobs.cancel", "savepoint": "jobs.savepoint",
            "checkpoint": "jobs.checkpoint", "stop": "jobs.stop", "dashboard": "jobs.dashboard", "users": "users.users"}
