"""Our own connection in the TUI (`amqp tui URL --recv/--send`) against the proton test broker."""

from __future__ import annotations

import asyncio

import pytest
from proton import Message

from amqpcli.cli.options import build_config
from amqpcli.tui.app import AmqpTui
from amqpcli.tui.sources.client import ClientSource
from amqpcli.tui.widgets.framelog import FrameLog
from amqpcli.tui.widgets.link import UnsettledTable
from tests.peers.broker import Broker
from tests.tui.waiting import TRIES, attached, our_link_shown, until


@pytest.mark.integration
def test_receive_grant_credit_and_settle_by_key(broker: Broker) -> None:
    broker.put("q", *(Message(body=f"m{i}") for i in range(3)))
    src = ClientSource(build_config(f"{broker.url}/q"), receive=True)

    async def run() -> None:
        app = AmqpTui(src, credit_step=5)
        async with app.run_test(size=(140, 44)) as pilot:
            await our_link_shown(app, pilot, src)
            await pilot.pause()
            table = app.query_one(UnsettledTable)
            assert table.keys == []  # no credit granted yet: nothing arrives
            await pilot.press("c")
            await until(app, pilot, lambda: len(table.keys) == 3)
            # Accept the first, reject the second, by key.
            table.focus()
            await pilot.press("home", "enter")
            await pilot.pause()
            await pilot.press("a")
            await until(app, pilot, lambda: len(table.keys) == 2)
            assert broker.queue_bodies("q") == ["m1", "m2"]
            table.focus()
            await pilot.press("1", "home", "enter")
            await pilot.pause()
            await pilot.press("r")
            await until(app, pilot, lambda: len(table.keys) == 1)
            for _ in range(TRIES):
                if broker.queue_bodies("q") == ["m2"]:
                    break
                await pilot.pause(0.05)
            assert broker.queue_bodies("q") == ["m2"]
            # Drain: a flow with drain set goes out; the broker has nothing more to send.
            app.conn_tree.focus()
            await pilot.press("d")
            log_lines = lambda: [app.log_view.line_text(r) for r in src.store.since(0)]
            await until(app, pilot, lambda: any(" -> " in x and " flow " in x and "drain" in x
                                                 for x in log_lines()))
            # The frame log saw both directions, from the protocol header on.
            log = app.query_one(FrameLog)
            lines = [log.line_text(r) for r in src.store.since(0)]
            assert "protocol header" in lines[0]
            assert any("disposition" in x and "accepted" in x for x in lines)
            assert any("disposition" in x and "rejected" in x for x in lines)

    asyncio.run(run())


@pytest.mark.integration
def test_send_by_key(broker: Broker) -> None:
    src = ClientSource(build_config(f"{broker.url}/out"), receive=False)

    async def run() -> None:
        app = AmqpTui(src)
        async with app.run_test(size=(140, 44)) as pilot:
            await until(app, pilot, attached(app, src))
            (key,) = app.conn_tree.link_keys
            app.select_link(key)
            await pilot.pause()
            await pilot.press("s", "s")
            for _ in range(TRIES):
                if len(broker.queue_bodies("out")) == 2:
                    break
                await pilot.pause(0.05)
            assert broker.queue_bodies("out") == ["message 1 from amqp tui", "message 2 from amqp tui"]
            # Settling is for receiving links: a notice, nothing sent.
            await pilot.press("a")
            assert src.sent == 2

    asyncio.run(run())
