"""The settle keys on the Link tab act on the row under the cursor when the key is pressed.

Settling the row under the cursor takes it out of the unsettled table; the cursor then
shows the next row (same index, so no highlight event comes). The next key is for that
row, not for the delivery just settled: one key after another goes through a backlog
from the top (`amqp tui URL --recv` and `amqp tui --serve`)."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from proton import Delivery, Message
from proton.handlers import MessagingHandler
from proton.reactor import Container

from amqpcli.cli.options import build_config
from amqpcli.tui.app import AmqpTui
from amqpcli.tui.sources.base import Unsupported
from amqpcli.tui.sources.client import ClientSource
from amqpcli.tui.sources.serve import ServeSource
from amqpcli.tui.widgets.link import UnsettledTable
from tests.peers.broker import Broker
from tests.tui.waiting import TRIES, our_link_shown, until


def _warnings(app: AmqpTui) -> list[str]:
    return [n.message for n in app._notifications if n.severity == "warning"]


async def _settle_from_the_top(app: AmqpTui, pilot: Any, table: UnsettledTable,
                               keys: str) -> None:
    """Press each settle key with the cursor on the table's first row, once the row the
    previous key settled has left the table."""
    table.focus()
    await pilot.press("home")
    for key in keys:
        n = len(table.keys)
        assert app.settle_target() == table.keys[0]
        await pilot.press(key)
        await until(app, pilot, lambda n=n: len(table.keys) == n - 1)
        assert table.cursor_key == (table.keys[0] if table.keys else None)
    assert _warnings(app) == []


@pytest.mark.integration
def test_recv_settle_keys_follow_the_cursor(broker: Broker) -> None:
    broker.put("q", *(Message(body=f"m{i}") for i in range(3)))
    src = ClientSource(build_config(f"{broker.url}/q"), receive=True)

    async def run() -> None:
        app = AmqpTui(src, credit_step=10)
        async with app.run_test(size=(140, 44)) as pilot:
            await our_link_shown(app, pilot, src)
            await pilot.pause()
            await pilot.press("c")
            table = app.query_one(UnsettledTable)
            await until(app, pilot, lambda: len(table.keys) == 3)
            # m0 accepted, m1 rejected: both gone from the queue (a released or modified
            # message would come back to us at once: we still have credit)
            await _settle_from_the_top(app, pilot, table, "ar")
            for _ in range(TRIES):
                if broker.queue_bodies("q") == ["m2"]:
                    break
                await pilot.pause(0.05)
            assert broker.queue_bodies("q") == ["m2"]

    asyncio.run(run())


NAMES = {Delivery.ACCEPTED: "accepted", Delivery.REJECTED: "rejected",
         Delivery.RELEASED: "released", Delivery.MODIFIED: "modified"}


class _Sender(MessagingHandler):  # type: ignore[misc]
    """Sends `n` messages at once, unsettled, and records the outcome of each by tag."""

    def __init__(self, url: str, n: int) -> None:
        super().__init__()
        self.url, self.n, self.sent = url, n, 0
        self.outcomes: dict[str, tuple[str, bool]] = {}

    def on_start(self, event: Any) -> None:
        self.conn = event.container.connect(self.url)
        event.container.create_sender(self.conn, "orders")

    def on_sendable(self, event: Any) -> None:
        while event.sender.credit and self.sent < self.n:
            self.sent += 1
            event.sender.send(Message(body=f"b{self.sent}"), tag=str(self.sent))

    def on_settled(self, event: Any) -> None:
        d = event.delivery
        self.outcomes[str(d.tag)] = (NAMES.get(d.remote_state, str(d.remote_state)),
                                     bool(d.remote.failed))
        if len(self.outcomes) == self.n:
            self.conn.close()


@pytest.mark.integration
def test_serve_settle_keys_follow_the_cursor(free_port: int) -> None:
    src = ServeSource(("127.0.0.1", free_port))
    sender = _Sender(f"amqp://127.0.0.1:{free_port}", 4)
    container = Container(sender)
    thread = threading.Thread(target=container.run, daemon=True)

    async def run() -> None:
        app = AmqpTui(src)
        async with app.run_test(size=(140, 44)) as pilot:
            assert await asyncio.to_thread(src.ready.wait, 30) and src.error is None
            thread.start()
            await until(app, pilot, lambda: bool(app.conn_tree.link_keys))
            (key,) = app.conn_tree.link_keys
            assert app.select_link(key)
            table = app.query_one(UnsettledTable)
            await until(app, pilot, lambda: len(table.keys) == 4)
            first = table.keys[0]
            await _settle_from_the_top(app, pilot, table, "arlm")
            await asyncio.to_thread(thread.join, 30)
            assert sender.outcomes == {"1": ("accepted", False), "2": ("rejected", False),
                                       "3": ("released", False), "4": ("modified", True)}
            # A message already settled is said to be, not to be no message of a sender.
            with pytest.raises(Unsupported, match="that delivery is already settled"):
                src.settle(first, "accepted")

    try:
        asyncio.run(run())
    finally:
        container.stop()
        src.stop()
