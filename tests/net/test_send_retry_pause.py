"""`amqp send --on-release retry` against `amqp serve --release`: a released message pauses
before it goes again (it went again at once, so a peer that releases for want of a
consumer got it back in a tight loop), the messages ready meanwhile go on without it, and
one pausing when the run is interrupted counts as released; input read from a pipe that
waits for its next line does not hold a retry back. The send logic runs in this
process with the pauses timed by a fake clock (`_Clock`): they end when the test says, so
what the peer receives, and in what order, does not hang on the wall clock."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from amqpcli.codec.message import Message
from amqpcli.net.client import SenderLink
from amqpcli.net.config import ConnectionConfig
from amqpcli.net.outgoing import OutgoingMessage
from amqpcli.net.sending import PulledInThread, SendPlan, SendSummary, _Sender, retry_wait
from amqpcli.net.url import parse_urls
from tests.net.clirun import amqp
from tests.net.servepeer import ServePeers

pytestmark = pytest.mark.integration


class _Clock:
    """Pauses recorded (message number, seconds); each one held until `go_on`, and from
    then on over at once."""

    def __init__(self) -> None:
        self.pauses: list[tuple[int, float]] = []
        self.held: list[tuple[asyncio.TimerHandle, Callable[..., None], tuple[Any, ...]]] = []
        self.going = False

    def call_later(self, delay: float, callback: Callable[..., None],
                   *args: Any) -> asyncio.Handle:
        self.pauses.append((args[0], delay))
        loop = asyncio.get_running_loop()
        if self.going:
            handle: asyncio.Handle = loop.call_soon(callback, *args)
        else:
            # (a timer that would end long after the test: it ends when `go_on` says)
            handle = loop.call_later(3600, callback, *args)
            self.held.append((handle, callback, args))  # type: ignore[arg-type]
        return handle

    def go_on(self) -> None:
        self.going = True
        loop = asyncio.get_running_loop()
        for handle, callback, args in self.held:
            if not handle.cancelled():
                handle.cancel()
                loop.call_soon(callback, *args)
        self.held.clear()


def _messages(count: int, at_end: Callable[[], None] | None = None) -> Iterator[OutgoingMessage]:
    for n in range(1, count + 1):
        yield OutgoingMessage(number=n, payload=Message(f"m{n}".encode()).encode())
    if at_end is not None:
        at_end()


def _sender(url: str, **plan: Any) -> tuple[_Sender, _Clock]:
    s = _Sender(ConnectionConfig(endpoint=parse_urls(f"{url}/q")),
                SendPlan(address="q", timeout=20, **plan))
    clock = _Clock()
    s.call_later = clock.call_later  # type: ignore[assignment]
    return s, clock


def _bodies(url: str) -> list[str]:
    r = amqp("recv", f"{url}/q", "--drain", "--bodies-only", "--timeout", "10")
    assert r.returncode == 0, r.stderr
    return r.stdout.splitlines()


def test_released_messages_pause_while_the_others_go_on(serve: ServePeers) -> None:
    # every third delivery on the link is released; one message in flight at a time, so
    # that each release is heard before the next message goes
    url = serve("-q", "--release", "every:3")
    s, clock = _sender(url, window=1, release_retries=3)
    # the pauses end once the input is over: the messages after a released one went on
    summary: SendSummary = asyncio.run(s.run(_messages(10, at_end=clock.go_on)))
    assert summary.failure is None
    assert (summary.sent, summary.accepted, summary.released, summary.retries) == (14, 10, 0, 4)
    # deliveries 3, 6, 9 released: each paused for its first retry; 3, 6, 9 went again as
    # deliveries 11, 12 (6, released again: a longer pause), 13, and 6 as 14
    assert clock.pauses == [(3, retry_wait(1)), (6, retry_wait(1)), (9, retry_wait(1)),
                            (6, retry_wait(2))]
    assert retry_wait(2) > retry_wait(1) > 0
    assert _bodies(url) == ["m1", "m2", "m4", "m5", "m7", "m8", "m10", "m3", "m9", "m6"]


def test_interrupted_while_retries_pause_they_count_as_released(
        serve: ServePeers, monkeypatch: pytest.MonkeyPatch) -> None:
    url = serve("-q", "--release", "all")
    s, clock = _sender(url, release_retries=3)
    wait_changed = SenderLink.wait_changed
    interrupted: list[bool] = []

    async def interrupt_once_all_pause(self: SenderLink, deadline: float | None,
                                       what: str) -> None:
        # Ctrl-C (which cancels the run's task) as the run waits with every message
        # released and pausing before its retry. (Not as the last release is read: a
        # cancel that comes as asyncio.wait_for's own wait ends is lost on Python 3.11.)
        if len(clock.pauses) == 3 and not s.unconfirmed and not interrupted:
            interrupted.append(True)
            task = asyncio.current_task()
            assert task is not None
            task.cancel()
        await wait_changed(self, deadline, what)

    monkeypatch.setattr(SenderLink, "wait_changed", interrupt_once_all_pause)

    summary = asyncio.run(s.run(_messages(3)))
    assert interrupted == [True]
    assert summary.failure is not None and str(summary.failure) == "interrupted"
    assert [n for n, _ in clock.pauses] == [1, 2, 3]
    assert (summary.sent, summary.released, summary.retries, len(summary.in_doubt)) == \
        (3, 3, 0, 0)
    assert [n for n, _ in summary.released_messages] == [1, 2, 3]
    obj = summary.to_json()
    assert (obj["released"], obj["retried"], obj["exit"]) == (3, 0, 130)


def test_a_retry_goes_while_the_input_waits_for_its_next_line(serve: ServePeers) -> None:
    url = serve("-q", "--release", "first:1")
    s, clock = _sender(url, release_retries=3)
    clock.going = True  # (every pause over at once)
    accepted_before_line_2: list[int] = []

    def lines() -> Iterator[OutgoingMessage]:
        # a pipe whose second line comes only once the first message was accepted (its
        # retry: the first try is released), or after a minute (a hang guard)
        yield OutgoingMessage(number=1, payload=Message(b"m1").encode())
        deadline = time.monotonic() + 60
        while s.s.accepted < 1 and time.monotonic() < deadline:
            time.sleep(0.01)
        accepted_before_line_2.append(s.s.accepted)
        yield OutgoingMessage(number=2, payload=Message(b"m2").encode())

    s.pulled = PulledInThread(lines())
    summary = asyncio.run(s.run(s.pulled))
    assert summary.failure is None
    assert accepted_before_line_2 == [1]
    assert clock.pauses == [(1, retry_wait(1))]
    assert (summary.sent, summary.accepted, summary.retries) == (3, 2, 1)
    assert _bodies(url) == ["m1", "m2"]
