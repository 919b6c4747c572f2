"""The Delivery tab keeps the delivery the user opened while the replay moves on: it
followed the unsettled table's cursor, which lands on another row as settled rows leave
the table (delivery 4 opened at frame 34 became delivery 18 at frame 46, with no key
pressed). It changes only when another delivery is opened."""

from __future__ import annotations

import asyncio

from textual.widgets import TabbedContent

from amqpcli.tui.app import AmqpTui
from amqpcli.tui.sources.replay import ReplaySource, load_capture
from amqpcli.tui.widgets.delivery import DeliveryPanel
from amqpcli.tui.widgets.link import UnsettledTable
from tests.paths import REPO_ROOT

CAPTURE = REPO_ROOT / "amqpcli" / "examples" / "serve-session.pcapng"
SENDER = "c1|s0.0|client|amqp-sender-1"


async def _moved(app: AmqpTui, pilot: object, spec: str) -> None:
    app.goto(spec)
    await app.workers.wait_for_complete()
    app.pull()
    await pilot.pause()  # type: ignore[attr-defined]


def test_the_opened_delivery_stays_while_the_replay_moves_on() -> None:
    async def run() -> None:
        app = AmqpTui(ReplaySource(loaded=load_capture(CAPTURE)))
        async with app.run_test(size=(150, 44)) as pilot:
            await _moved(app, pilot, "34")
            assert app.select_link(SENDER)
            await pilot.pause()
            table = app.query_one(UnsettledTable)
            table.focus()
            await pilot.press("down", "down", "down", "down", "enter")
            await pilot.pause()
            panel = app.query_one(DeliveryPanel)
            assert app.query_one(TabbedContent).active == "delivery"
            assert panel.detail is not None and panel.detail.title.startswith("delivery id 4 ")
            opened = app.delivery_key
            # frame by frame past the frames that settle it and the ones before it
            for frame in [*range(35, 49), 106, 34]:
                await _moved(app, pilot, str(frame))
                assert app.delivery_key == opened, frame
                assert panel.detail is not None and panel.detail.key == opened, frame
                assert panel.detail.title.startswith("delivery id 4 "), frame
            # another link in the tree: the tab still shows the delivery opened
            await _moved(app, pilot, "106")
            other = next(k for k in app.conn_tree.link_keys if k != SENDER)
            assert app.select_link(other)
            await pilot.pause()
            app.pull()
            assert panel.detail is not None and panel.detail.key == opened
            assert "[settled]" in panel.detail.summary
            # before its first transfer the model has no such delivery: the tab says so
            await _moved(app, pilot, "10")
            assert panel.detail is not None and panel.detail.key == opened
            title = str(panel.query_one("#delivery-title").render())
            assert "not in the model at this point" in title
            # opening another one changes it
            await _moved(app, pilot, "34")
            assert app.select_link(SENDER)
            await pilot.pause()
            app.action_tab("link")
            table.focus()
            await pilot.press("home", "enter")
            await pilot.pause()
            assert panel.detail is not None and panel.detail.title.startswith("delivery id 0 ")

    asyncio.run(run())


def test_the_settle_keys_act_on_what_is_in_view(fake_source) -> None:
    """On the Link tab the row under the table's cursor; on the Delivery tab the delivery
    opened (the table's cursor may have moved on meanwhile)."""

    async def run() -> None:
        app = AmqpTui(fake_source)
        async with app.run_test(size=(120, 40)) as pilot:
            assert app.select_link("c1/s0/l0")
            await pilot.pause()
            table = app.query_one(UnsettledTable)
            table.focus()
            await pilot.press("down", "enter")  # opens d1
            await pilot.pause()
            assert app.query_one(TabbedContent).active == "delivery"
            await pilot.press("1")
            table.focus()
            await pilot.press("down")  # the cursor on d2; d1 stays opened
            await pilot.pause()
            assert app.query_one(DeliveryPanel).detail.key == "c1/s0/l0/d1"
            await pilot.press("a")
            await pilot.press("2", "r")
            assert fake_source.settled == [("c1/s0/l0/d2", "accepted"), ("c1/s0/l0/d1", "rejected")]

    asyncio.run(run())
