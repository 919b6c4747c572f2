"""`amqp recv` writes a run of ready messages and flushes once, before settling any."""

from __future__ import annotations

import io
from collections import deque
from typing import Any

from amqpcli.cli.recv import Sink
from amqpcli.net.client import ReceiverLink


class _Stream(io.StringIO):
    def __init__(self, log: list[str]) -> None:
        super().__init__()
        self.log = log

    def flush(self) -> None:
        self.log.append("flush")

    def isatty(self) -> bool:
        return False


def test_write_many_writes_all_then_flushes_once() -> None:
    log: list[str] = []
    sink = Sink(json_lines=True, out=None)
    sink.stream = _Stream(log)

    def fake_write(incoming: Any) -> None:
        log.append(f"write {incoming}")

    sink._write = fake_write  # type: ignore[method-assign]
    sink.write_many([1, 2, 3])  # type: ignore[list-item]
    assert log == ["write 1", "write 2", "write 3", "flush"]
    log.clear()
    sink.write(4)  # type: ignore[arg-type]
    assert log == ["write 4", "flush"]


def test_take_returns_what_is_queued_up_to_the_limit() -> None:
    link = ReceiverLink.__new__(ReceiverLink)
    link.queue = deque([1, 2, 3, 4, 5])  # type: ignore[list-item]
    assert link.take(2) == [1, 2]
    assert link.take(None) == [3, 4, 5]
    assert link.take(None) == []
    link.queue.extend([6, 7])  # type: ignore[list-item]
    assert link.take(5) == [6, 7]
    assert not link.queue
