"""A task waits for its TaskManager's Spark session, and for the session's warm-up while one runs: beside it, the
task's first bundle would compete for the same JVM's one-time work (runtime.taskmanager.warm_up)."""
from __future__ import annotations

import asyncio
import types

import pytest

from runtime.config import Configuration
from runtime.taskmanager.services import TaskManagerServices


def services() -> TaskManagerServices:
    """Services whose session has not started yet (spark_started pending), on the running loop."""
    spark = types.SimpleNamespace(keeper=types.SimpleNamespace(current=lambda: None))
    svc = TaskManagerServices(Configuration({}), spark, None, None, None, "token", None, None, None)  # type: ignore[arg-type]
    svc.spark_started = asyncio.get_running_loop().create_future()
    return svc


def seen_by_a_task(prepare, steps: list[tuple[str, str]]) -> list[str]:
    """What happened, in order: a task waits for Spark (TaskServices.spark_ready) while ``steps`` (name, name of
    the services' future it completes) run one loop turn apart, after ``prepare(services)``."""
    async def scenario() -> list[str]:
        svc, seen = services(), []
        prepare(svc)

        async def task() -> None:
            await svc.spark_ready()
            seen.append("task ready")
        waiting = asyncio.ensure_future(task())
        for name, future in steps:
            await asyncio.sleep(0.01)
            getattr(svc, future).set_result(None)
            seen.append(name)
        await asyncio.wait_for(waiting, 1.0)
        return seen
    return asyncio.run(scenario())


def warming(svc: TaskManagerServices) -> None:
    """Up, and warming up when the task comes."""
    svc.spark_started.set_result(None)
    svc.spark_warmed = asyncio.get_running_loop().create_future()


def test_a_task_placed_during_the_warm_up_waits_for_it_to_end():
    assert seen_by_a_task(warming, [("warmed up", "spark_warmed")]) == ["warmed up", "task ready"]


def test_without_a_warm_up_a_task_starts_once_the_session_is_up():
    assert seen_by_a_task(lambda svc: None, [("session up", "spark_started")]) == ["session up", "task ready"]


def test_a_session_that_failed_to_start_fails_the_task_naming_why():
    async def scenario():
        svc = services()
        svc.spark_started.set_exception(RuntimeError("no java"))
        await svc.spark_ready()
    with pytest.raises(RuntimeError, match="no java"):
        asyncio.run(scenario())
