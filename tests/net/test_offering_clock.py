"""A drain answered when a send runs out of messages (`Offering.offer`) goes through the
client's clock like every other step of ours: its flow frame is stamped with when it went
(--trace, idle-timeout keep-alives), not with when the peer last sent."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from amqpcli.net.client import Client
from amqpcli.net.config import ConnectionConfig
from amqpcli.net.sendrun import Offering


class _Engine:
    def __init__(self) -> None:
        self.now = 0.0
        self.drained_at: list[tuple[Any, float]] = []

    def set_time(self, now: float) -> None:
        self.now = now

    def drained(self, link: Any) -> None:
        self.drained_at.append((link, self.now))


def test_the_drain_answer_is_stamped_with_now() -> None:
    client = Client(ConnectionConfig())
    engine = client.engine = _Engine()  # type: ignore[assignment]
    flushed: list[bool] = []
    client.transport = SimpleNamespace(flush=lambda: flushed.append(True))  # type: ignore[assignment]
    offering = Offering()
    offering.offer(False, SimpleNamespace(client=client, link="L"))  # type: ignore[arg-type]
    ((link, at),) = engine.drained_at
    assert link == "L" and at > 0  # the clock was set before the step, as _acting does
    assert flushed == [True]
