"""`_Link.wait_changed` keeps a change until a wait takes it: a change that came between
the caller's look at its condition and its wait (while it wrote, or let the loop run)
ends the wait at once instead of being forgotten until the deadline. The interleavings
are forced with the event loop's own scheduling; the deadlines only turn a missed
wake-up into a failure instead of a hang."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from types import SimpleNamespace
from typing import Any

import pytest

from amqpcli.errors import Exit, UserError
from amqpcli.net.client import Client, ReceiverLink, SenderLink
from amqpcli.net.config import ConnectionConfig
from amqpcli.net.outgoing import OutgoingMessage
from amqpcli.net.sending import SendPlan, _Sender

SHORT = 0.5  # seconds: how long a forgotten wake-up keeps a wait from returning


def run(coro: Coroutine[Any, Any, None]) -> None:
    async def guarded() -> None:
        async with asyncio.timeout(5):  # a hang is a failure, not a stuck test run
            await coro

    asyncio.run(guarded())


def _receiver() -> tuple[Client, ReceiverLink]:
    client = Client(ConnectionConfig())
    link = ReceiverLink(client, SimpleNamespace(), "q")
    client._links[id(link.link)] = link
    return client, link


def _closed_by_peer(client: Client) -> UserError:
    client.error = UserError("the peer closed the connection: amqp:connection:forced",
                             Exit.REFUSED)
    client._fail_all()
    return client.error


def test_a_change_between_the_look_and_the_wait_ends_the_wait() -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        _, link = _receiver()
        link.changed.clear()
        assert not link.queue  # the caller looks: nothing yet

        def arrives() -> None:  # what the read loop does with a transfer
            link.queue.append(SimpleNamespace(number=1))  # type: ignore[arg-type]
            link.changed.set()

        # Before the caller waits it lets the loop run once (a write, a flush): the
        # message comes then.
        loop.call_soon(arrives)
        await asyncio.sleep(0)
        started = loop.time()
        await link.wait_changed(started + SHORT, "timeout")
        assert link.queue
        assert loop.time() - started < SHORT

    run(main())


def test_a_close_before_the_wait_is_raised_not_timed_out() -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        client, link = _receiver()
        link.changed.clear()
        loop.call_soon(_closed_by_peer, client)
        await asyncio.sleep(0)
        with pytest.raises(UserError) as info:
            await link.wait_changed(loop.time() + SHORT, "timeout")
        assert info.value is client.error and info.value.code == Exit.REFUSED

    run(main())


def test_one_change_ends_one_wait() -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        _, link = _receiver()
        link.changed.set()
        await link.wait_changed(loop.time(), "timeout")  # the change: at once
        with pytest.raises(UserError) as info:  # taken: the next wait waits (deadline gone)
            await link.wait_changed(loop.time(), "timeout")
        assert info.value.code == Exit.TIMEOUT and str(info.value) == "timeout"

    run(main())


def test_a_wait_woken_by_a_change_sees_the_next_one_too() -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        _, link = _receiver()
        link.changed.clear()
        woken = loop.create_future()

        async def waiter() -> None:
            await link.wait_changed(loop.time() + SHORT, "timeout")
            woken.set_result(None)
            # The caller looks again; before it waits, another change comes.
            await asyncio.sleep(0)
            await link.wait_changed(loop.time() + SHORT, "timeout")

        task = asyncio.create_task(waiter())
        await asyncio.sleep(0)
        link.changed.set()
        await woken
        link.changed.set()  # while the waiter looks, between its two waits
        started = loop.time()
        await task
        assert loop.time() - started < SHORT

    run(main())


def test_send_hears_a_close_that_came_while_it_wrote() -> None:
    # `amqp send` waits for its outcomes after writing; the peer's close came during the
    # write: it is reported as the close, not as "no outcome" after --timeout.
    async def main() -> None:
        client = Client(ConnectionConfig())
        sender = SenderLink(client, SimpleNamespace(), "q")
        client._links[id(sender.link)] = sender
        s = _Sender(ConnectionConfig(), SendPlan(address="q", timeout=SHORT))
        s.sender = sender
        s.unconfirmed[1] = (OutgoingMessage(number=1, payload=b"x"), None)
        sender.changed.clear()
        asyncio.get_running_loop().call_soon(_closed_by_peer, client)
        await asyncio.sleep(0)
        with pytest.raises(UserError) as info:
            await s._wait_confirmed(client)
        assert info.value is client.error

    run(main())
