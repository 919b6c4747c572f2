"""Test doubles for the hooks that watch a live connection: a lock that says whether it is
held, a byte tap that records both ways, and a round trip of messages to drive them."""

from __future__ import annotations

import asyncio
from typing import Self

from amqpcli.codec import composites as c
from amqpcli.net.client import Client


class DepthLock:
    """A re-entrant stand-in for a lock that says whether it is held."""

    def __init__(self) -> None:
        self.depth = 0
        self.entered = 0

    def __enter__(self) -> Self:
        self.depth += 1
        self.entered += 1
        return self

    def __exit__(self, *exc: object) -> None:
        self.depth -= 1


class Tap:
    """A byte tap (`Endpoint.set_tap`) that keeps both ways and, given a lock, counts the
    calls made without it held."""

    def __init__(self, lock: DepthLock | None = None) -> None:
        self.lock = lock
        self.out = bytearray()
        self.into = bytearray()
        self.unlocked = 0

    def _check(self) -> None:
        if self.lock is not None and self.lock.depth == 0:
            self.unlocked += 1

    def received(self, data: bytes, time: float) -> None:
        self._check()
        self.into += data

    def sent(self, data: bytes) -> None:
        self._check()
        self.out += data


async def round_trip(client: Client, n: int) -> list[bytes]:
    """`n` messages sent to queue q, each confirmed accepted, then received back, accepted
    and settled: their payloads."""
    sender = await client.open_sender("q")
    ps = [sender.send(f"m{i}".encode(), settled=False) for i in range(n)]
    for p in ps:
        await asyncio.wait_for(p.wait(), 10)
        assert isinstance(p.state, c.Accepted)
    receiver = await client.open_receiver("q")
    receiver.flow(n)
    got = []
    for _ in range(n):
        inc = await receiver.get(10)
        assert inc is not None
        receiver.settle(inc, c.Accepted())
        got.append(inc.payload)
    receiver.flush_settlements()
    await receiver.close()
    await sender.close()
    return got
