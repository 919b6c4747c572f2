"""A stand-in for `amqp respond`'s request link, for the responder's unit tests: what it
settles and the credit it is given are recorded; `queue` is what `take` hands out."""

from __future__ import annotations

from typing import Any


class FakeRequestLink:
    def __init__(self) -> None:
        self.ended = False
        self.credit = 10
        self.received = 0
        self.queue: list[Any] = []
        self.settled: list[tuple[int, Any]] = []
        self.flows: list[int] = []

    def settle(self, inc: Any, state: Any) -> None:
        self.settled.append((inc.number, state))

    def flow(self, n: int) -> None:
        self.flows.append(n)
        self.credit = n

    def take(self, limit: int | None) -> list[Any]:
        out, self.queue = self.queue, []
        return out

    def flush_settlements(self) -> None:
        pass
