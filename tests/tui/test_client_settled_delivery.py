"""`amqp tui URL --recv`: the Delivery tab of a delivery we settle by key shows it settled,
with the disposition in its timeline (it stayed "[unsettled] outcome unsettled")."""

from __future__ import annotations

import asyncio

import pytest
from proton import Message

from amqpcli.cli.options import build_config
from amqpcli.tui.app import AmqpTui
from amqpcli.tui.sources.client import ClientSource
from amqpcli.tui.widgets.link import UnsettledTable
from tests.peers.broker import Broker
from tests.tui.waiting import our_link_shown, until


@pytest.mark.integration
def test_delivery_tab_follows_the_settlement_we_made(broker: Broker) -> None:
    broker.put("q", *(Message(body=f"m{i}") for i in range(2)))
    src = ClientSource(build_config(f"{broker.url}/q"), receive=True)

    async def run() -> None:
        app = AmqpTui(src, credit_step=5)
        async with app.run_test(size=(140, 44)) as pilot:
            await our_link_shown(app, pilot, src)
            await pilot.pause()
            table = app.query_one(UnsettledTable)
            await pilot.press("c")
            await until(app, pilot, lambda: len(table.keys) == 2)
            table.focus()
            await pilot.press("home", "enter")
            await pilot.pause()
            panel = app.delivery_panel
            assert panel.detail is not None and "[unsettled]" in panel.detail.summary
            await pilot.press("a")
            await until(app, pilot, lambda: len(table.keys) == 1)
            await until(app, pilot, lambda: panel.detail is not None
                         and "accepted" in panel.detail.summary)
            assert "[unsettled]" not in panel.detail.summary
            assert any(r.what == "disposition" and "accepted" in r.detail
                       for r in panel.detail.timeline)

    asyncio.run(run())
