"""asyncio helpers every part shares."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

__all__ = ["wait_within"]

T = TypeVar("T")


async def wait_within(aw: Awaitable[T], timeout: float | None) -> T:
    """`await aw`, or TimeoutError after `timeout` seconds (None: no limit).

    Not `asyncio.wait_for`: before Python 3.12 it returns its awaitable's result when the
    task is cancelled (Ctrl-C, SIGTERM) as that awaitable completes, and the stop is lost:
    the run goes on, and the signals after the first are ignored. `asyncio.timeout` runs
    `aw` in the caller's task, whose cancellation it never swallows."""
    async with asyncio.timeout(timeout):
        return await aw
