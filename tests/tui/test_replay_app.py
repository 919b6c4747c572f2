"""Replays through the app: load a capture, scrub, select, open a delivery, filter frames."""

from __future__ import annotations

import asyncio
from pathlib import Path

from textual.widgets import TabbedContent

from amqpcli.tui.app import AmqpTui
from amqpcli.tui.sources.replay import ReplaySource
from amqpcli.tui.synth import write_conversation
from amqpcli.tui.widgets.delivery import DeliveryPanel
from amqpcli.tui.widgets.framelog import FrameLog
from amqpcli.tui.widgets.link import LinkPanel, UnsettledTable
from tests.tui.replaying import replayed
from tests.tui.terminal import terminal_keys

ORDERS = "c1|s0.0|client|orders-sender"
REPLIES = "c1|s0.0|server|replies-receiver"


def _source(tmp_path: Path, deliveries: int = 250, **kw: int) -> ReplaySource:
    path = tmp_path / "synth.pcapng"
    write_conversation(path, deliveries, batch=50, **kw)
    src = ReplaySource(path, interval=40)
    src.load()
    return src


async def _settle(app: AmqpTui) -> None:
    await app.workers.wait_for_complete()
    app.pull()


def test_scrub_forward_and_back(tmp_path: Path) -> None:
    src = _source(tmp_path)

    async def run() -> None:
        app = AmqpTui(src)
        async with app.run_test(size=(140, 44)) as pilot:
            assert src.controller is not None
            total = len(src.controller)
            app.goto(str(total))
            await _settle(app)
            assert src.controller.position == total
            tree = app.conn_tree
            assert tree.link_keys == [ORDERS, REPLIES]
            assert app.select_link(ORDERS)
            await pilot.pause()
            table = app.query_one(UnsettledTable)
            # The last three of 250 deliveries were never settled.
            assert table.keys == [f"{ORDERS}|{i:08x}" for i in (247, 248, 249)]
            detail = app.query_one(LinkPanel).detail
            assert detail is not None
            flow = dict(detail.flow)
            assert flow["deliveries"] == "250" and flow["outcomes"] == "accepted 247"
            # The broker granted a durable target nobody asked for: marked as a difference.
            durable = [r for r in detail.target if r.field == "durable"]
            assert durable and durable[0].differs
            # Back to the frame before the last disposition of the orders link: 50 more open.
            before = src.controller.position
            app.goto("0")
            await _settle(app)
            assert src.controller.position == 0
            assert app.conn_tree.link_keys == []
            app.goto(str(before))
            await _settle(app)
            for _ in range(100):  # (the cursor goes back after a refresh or two)
                await pilot.pause()
                if app.conn_tree.cursor_node is not None:
                    break
            assert app.query_one(UnsettledTable).keys[-1] == f"{ORDERS}|{249:08x}"
            # The tree's cursor is back on the link the panels kept showing.
            assert app.conn_tree.cursor_node is not None
            assert app.conn_tree.cursor_node.data == ORDERS
            # Step back one frame at a time with the keys until a disposition is undone.
            app.conn_tree.focus()
            for _ in range(8):
                await pilot.press("comma")
                await _settle(app)
            assert src.controller.position == before - 8
            assert src.controller.refed < before  # restored from a checkpoint, not from zero
            n = len(app.query_one(UnsettledTable).keys)
            assert n > 3
            await pilot.press(*terminal_keys("."))
            await _settle(app)
            assert src.controller.position == before - 7

    asyncio.run(run())


def test_open_delivery_and_stall_marks(tmp_path: Path) -> None:
    src = _source(tmp_path, deliveries=20)

    async def run() -> None:
        app = AmqpTui(src)
        async with app.run_test(size=(140, 44)) as pilot:
            assert src.controller is not None
            app.goto(str(len(src.controller)))
            await _settle(app)
            tree = app.conn_tree
            replies = next(lk for c in tree.conn_rows for s in c.sessions for lk in s.links
                       if lk.key == REPLIES)
            assert "2 settled by one side only" in replies.warnings
            app.select_link(ORDERS)
            await pilot.pause()
            table = app.query_one(UnsettledTable)
            table.focus()
            await pilot.press("down", "enter")
            await pilot.pause()
            assert app.query_one(TabbedContent).active == "delivery"
            panel = app.query_one(DeliveryPanel)
            assert panel.detail is not None
            assert panel.detail.title.startswith("delivery id 18 ")
            assert [r.what for r in panel.detail.timeline] == ["transfer"]
            assert panel.detail.raw.startswith(b"\x00Ss")  # properties section first
            await pilot.press("x")
            assert panel.raw
            # Settling is for our own links only: a notice, nothing else.
            await pilot.press("a")
            assert app.delivery_key == f"{ORDERS}|{18:08x}"

    asyncio.run(run())


def test_frame_log_filter_and_freeze(tmp_path: Path) -> None:
    src = _source(tmp_path, deliveries=120)

    async def run() -> None:
        app = AmqpTui(src)
        async with app.run_test(size=(140, 44)) as pilot:
            assert src.controller is not None
            app.goto("30")
            await _settle(app)
            await pilot.press("3")
            log = app.query_one(FrameLog)
            assert log.seqs == list(range(30))
            await pilot.press("f")
            assert log.frozen
            app.goto(str(len(src.controller)))
            await _settle(app)
            assert log.seqs == list(range(30))
            assert log.pending == len(src.controller) - 30
            await pilot.press("f")
            app.pull()
            assert len(log.seqs) == len(src.controller)
            await pilot.press("slash")
            await pilot.press(*"disposition side:server")
            for _ in range(1000):  # the scan goes on a few milliseconds per refresh
                app.pull()
                if not log.scanning:
                    break
            lines = [log.line_text(src.controller.records[s]) for s in log.seqs]
            assert lines and all("disposition" in x and "<-" in x for x in lines)
            # 120 deliveries in batches of 50 → 3 dispositions from the broker, plus the
            # sender's settlements of the two replies.
            assert len(lines) == 5

    asyncio.run(run())


def test_real_capture_loads_and_hides_the_password(testdata: Path) -> None:
    src = replayed(testdata / "captures" / "rabbitmq-sasl-plain-send-recv.pcapng")
    snap = src.snapshot(None, None, src.now())
    assert [c.key for c in snap.tree] == ["c1", "c2"]
    lines = [src.controller.records[i] for i in range(len(src.controller))]
    from amqpcli.tui.adapter import frame_line

    init = [frame_line(r).plain for r in lines if "sasl-init" in frame_line(r).plain]
    assert len(init) == 2
    # The user name stays, the password (also "guest") does not.
    assert all("\\x00guest\\x00guest" not in x and "***" in x for x in init), init


def test_play_speed_jump_prompt_and_palette(tmp_path: Path) -> None:
    src = _source(tmp_path, deliveries=40)

    async def run() -> None:
        app = AmqpTui(src)
        async with app.run_test(size=(140, 44)) as pilot:
            assert src.controller is not None
            total = len(src.controller)
            # Speed keys double and halve; 0 ("max") is what plays to the end at once.
            await pilot.press("plus")
            assert src.speed == 2.0
            await pilot.press("minus", "minus")
            assert src.speed == 0.5
            src.speed = 0
            await pilot.press("p")
            assert await asyncio.to_thread(src.finished.wait, 60)
            assert src.controller.position == total and not src.playing
            # Jump through the prompt: g, a frame number, Enter.
            await pilot.press("g")
            await pilot.press(*"12", "enter")
            await _settle(app)
            assert src.controller.position == 12
            await pilot.press("g")
            await pilot.press(*"nonsense", "enter")
            await _settle(app)
            assert src.controller.position == 12  # refused with a notice
            # The palette lists the replay's actions and every link.
            titles = [c.title for c in app.get_system_commands(app.screen)]
            assert "Play" in titles and "Jump" in titles and "Credit" not in titles
            app.goto(str(total))
            await _settle(app)
            titles = [c.title for c in app.get_system_commands(app.screen)]
            assert f"Link {ORDERS}" in titles

    asyncio.run(run())


def test_settled_delivery_stays_open_and_history_is_bounded(tmp_path: Path) -> None:
    path = tmp_path / "h.pcapng"
    write_conversation(path, 120, batch=50)
    src = ReplaySource(path, interval=40, history=5)
    src.load()

    async def run() -> None:
        app = AmqpTui(src)
        async with app.run_test(size=(140, 44)) as pilot:
            c = src.controller
            assert c is not None
            # Just before the first disposition: 50 deliveries unsettled.
            first_disp = next(r.seq for r in c.records if "disposition" in app.log_view.line_text(r))
            app.goto(str(first_disp))
            await _settle(app)
            app.select_link(ORDERS)
            await pilot.pause()
            table = app.query_one(UnsettledTable)
            assert len(table.keys) == 50
            table.focus()
            await pilot.press("ctrl+end", "enter")  # the newest: delivery 49
            await pilot.pause()
            panel = app.query_one(DeliveryPanel)
            assert panel.detail is not None and panel.detail.title.startswith("delivery id 49 ")
            # One frame on: the broker settles 0..49; delivery 49 is still on screen, settled.
            await pilot.press(*terminal_keys("."))
            await _settle(app)
            assert panel.detail is not None
            assert [r.what for r in panel.detail.timeline][-1] in ("settle", "disposition")
            assert "accepted" in panel.detail.summary
            # History is bounded: 5 settled deliveries kept, every one counted.
            ((_, cw),) = src.connections()
            assert len(cw.settled) == 5
            detail = app.query_one(LinkPanel).detail
            assert detail is not None and dict(detail.flow)["outcomes"] == "accepted 50"

    asyncio.run(run())
