"""`wait_within`: a wait with a time limit that never loses a stop."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from amqpcli.aio import wait_within


def _stopped_as_it_completes(wait: Callable[[Awaitable[Any], float], Awaitable[Any]]) -> str:
    """Cancel a task in the very step its wait's awaitable completes: what the task saw."""
    async def run() -> str:
        done: asyncio.Future[int] = asyncio.get_running_loop().create_future()

        async def waiter() -> str:
            await wait(done, 10)
            return "went on"

        task = asyncio.create_task(waiter())
        await asyncio.sleep(0)  # (the waiter is waiting now)
        done.set_result(1)
        task.cancel()
        try:
            return await task
        except asyncio.CancelledError:
            return "stopped"

    return asyncio.run(run())


def test_a_stop_as_the_wait_completes_is_not_lost() -> None:
    assert _stopped_as_it_completes(wait_within) == "stopped"


def test_the_limit_is_a_timeout_error() -> None:
    async def run() -> None:
        await wait_within(asyncio.sleep(10), 0.01)

    with pytest.raises(TimeoutError):
        asyncio.run(run())


def test_no_limit_and_a_result() -> None:
    async def run() -> int:
        async def one() -> int:
            return 1
        return await wait_within(one(), None)

    assert asyncio.run(run()) == 1


def test_the_package_waits_with_it() -> None:
    """No `asyncio.wait_for` in the package: each was a stop that could be lost."""
    from pathlib import Path

    import amqpcli

    root = Path(amqpcli.__file__).parent
    users = [str(p.relative_to(root)) for p in root.rglob("*.py")
             if "asyncio.wait_for(" in p.read_text(encoding="utf-8")]
    assert users == []
