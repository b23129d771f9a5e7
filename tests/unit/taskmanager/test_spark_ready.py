"""A task waits for its TaskManager's Spark session, and for the session's warm-up while one runs: beside it, the
task's first bundle would compete for the same JVM's one-time work (runtime.taskmanager.warm_up)."""
from __future__ import annotations

import asyncio
import types

import pytest

from runtime.config import Configuration
from runtime.taskmanager.services import TaskManagerServices


def services() -> TaskManagerServices:
    spark = types.SimpleNamespace(keeper=types.SimpleNamespace(current=lambda: None))
    return TaskManagerServices(Configuration({}), spark, None, None, None, "token", None, None, None)  # type: ignore[arg-type]


async def ready_after(svc: TaskManagerServices, steps) -> list[str]:
    """What happened, in order: each of ``steps`` (name, action) runs one loop turn after the previous."""
    seen: list[str] = []

    async def task() -> None:
        await svc.spark_ready()
        seen.append("task ready")
    waiting = asyncio.ensure_future(task())
    for name, action in steps:
        await asyncio.sleep(0.01)
        action()
        seen.append(name)
    await asyncio.wait_for(waiting, 1.0)
    return seen


def test_a_task_placed_during_the_warm_up_waits_for_it_to_end():
    async def scenario():
        loop = asyncio.get_running_loop()
        svc = services()
        svc.spark_started, svc.spark_warmed = loop.create_future(), loop.create_future()
        svc.spark_started.set_result(None)  # up, and warming up when the task comes
        return await ready_after(svc, [("warmed up", lambda: svc.spark_warmed.set_result(None))])
    assert asyncio.run(scenario()) == ["warmed up", "task ready"]


def test_without_a_warm_up_a_task_starts_once_the_session_is_up():
    async def scenario():
        svc = services()
        svc.spark_started = asyncio.get_running_loop().create_future()
        return await ready_after(svc, [("session up", lambda: svc.spark_started.set_result(None))])
    assert asyncio.run(scenario()) == ["session up", "task ready"]


def test_a_session_that_failed_to_start_fails_the_task_naming_why():
    async def scenario():
        svc = services()
        svc.spark_started = asyncio.get_running_loop().create_future()
        svc.spark_started.set_exception(RuntimeError("no java"))
        await svc.spark_ready()
    with pytest.raises(RuntimeError, match="no java"):
        asyncio.run(scenario())
