"""The app's widgets, driven by a pilot over hand-made rows."""

from __future__ import annotations

import asyncio

from textual.widgets import TabbedContent

from amqpcli.tui.app import AmqpTui
from amqpcli.tui.widgets.delivery import DeliveryPanel
from amqpcli.tui.widgets.help import HelpScreen
from amqpcli.tui.widgets.link import LinkPanel, UnsettledTable


def test_select_link_open_delivery_settle_by_key(fake_source) -> None:
    asyncio.run(_select_link_open_delivery_settle_by_key(fake_source))


async def _select_link_open_delivery_settle_by_key(src) -> None:
    app = AmqpTui(src)
    async with app.run_test(size=(120, 40)) as pilot:
        tree = app.conn_tree
        assert tree.link_keys == ["c1/s0/l0", "c1/s0/l1"]
        assert app.select_link("c1/s0/l0")
        await pilot.pause()
        assert app.link_key == "c1/s0/l0"
        panel = app.query_one(LinkPanel)
        assert panel.detail is not None and panel.detail.key == "c1/s0/l0"
        table = app.query_one(UnsettledTable)
        assert table.keys == ["c1/s0/l0/d0", "c1/s0/l0/d1", "c1/s0/l0/d2"]
        table.focus()
        await pilot.press("down", "enter")
        await pilot.pause()
        assert app.delivery_key == "c1/s0/l0/d1"
        assert app.query_one(TabbedContent).active == "delivery"
        assert app.query_one(DeliveryPanel).detail is not None
        await pilot.press("r")
        assert src.settled == [("c1/s0/l0/d1", "rejected")]
        await pilot.press("c")
        assert src.credit == [("c1/s0/l0", 10)]


def test_rows_disappear_and_help_opens(fake_source) -> None:
    asyncio.run(_rows_disappear_and_help_opens(fake_source))


async def _rows_disappear_and_help_opens(src) -> None:
    app = AmqpTui(src)
    async with app.run_test(size=(120, 40)) as pilot:
        app.select_link("c1/s0/l0")
        await pilot.pause()
        src.n_unsettled = 1
        app.pull()
        assert app.query_one(UnsettledTable).keys == ["c1/s0/l0/d0"]
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)
