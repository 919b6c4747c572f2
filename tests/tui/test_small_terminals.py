"""Small terminals: down to 80x24 everything that matters is on screen (the tree above the
tabs, the unsettled table's key columns whole, long values cut with "…" and whole in the
detail panes); below that the app still works (no exception, panes scroll)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from rich.text import Text

from amqpcli.capture.tcp import C2S, S2C
from amqpcli.capture.writer import CaptureWriter, TcpConversation
from amqpcli.codec import composites as c
from amqpcli.codec.frames import encode_frame, encode_protocol_header
from amqpcli.codec.message import Message
from amqpcli.codec.types import Symbol, UByte, UInt, UShort
from amqpcli.tui.app import AmqpTui
from amqpcli.tui.synth import write_conversation
from amqpcli.tui.view import LinkRow
from amqpcli.tui.widgets.help import HelpScreen
from amqpcli.tui.widgets.link import COLUMNS, UnsettledTable, column_widths
from amqpcli.tui.widgets.replaybar import bar_text
from amqpcli.tui.widgets.tree import link_label
from tests.tui.replaying import replay_app
from tests.tui.screen import screen_text

ORDERS = "c1|s0.0|client|orders-sender"
LONG_LINK = "sender-3f2a9c1e-7b4d-4e0a-9f61-2c8d5e7a1b90->queue://orders.priority"
LONG_ADDRESS = "/queues/orders.eu-west.priority-high/subscriptions/billing-consumers"
LONG_CID = "container-5b0e6c2a-1d3f-4a9b-8e7c-6f5d4c3b2a19-on-application-server-07"
TAG0 = "0x000102030405060708090a0b0c0d0e0f"  # the first delivery's tag: 16 bytes


@pytest.fixture(scope="module")
def synth(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("small") / "synth.pcapng"
    write_conversation(path, 60, batch=20)
    return path


@pytest.fixture(scope="module")
def long_names(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One link with a long name, address, container-id and 16-byte tags; four of its
    twelve deliveries rejected."""
    path = tmp_path_factory.mktemp("small") / "long.pcapng"
    with CaptureWriter(path, linktype=101) as w:
        conv = TcpConversation(w, ("127.0.0.1", 40001), ("127.0.0.1", 5672), step_ns=50_000)
        conv.handshake()

        def send(d: int, *parts: bytes) -> None:
            conv.send(d, b"".join(parts), mss=65000, ack=False)  # type: ignore[arg-type]

        f = encode_frame
        send(C2S, encode_protocol_header("amqp"), f(c.Open(container_id=LONG_CID, hostname="broker")))
        send(S2C, encode_protocol_header("amqp"), f(c.Open(container_id="broker")))
        send(C2S, f(c.Begin(next_outgoing_id=UInt(0), incoming_window=UInt(65535),
                            outgoing_window=UInt(65535))))
        send(S2C, f(c.Begin(remote_channel=UShort(0), next_outgoing_id=UInt(0),
                            incoming_window=UInt(65535), outgoing_window=UInt(65535))))
        for d, role in ((C2S, False), (S2C, True)):
            send(d, f(c.Attach(name=LONG_LINK, handle=UInt(0), role=role, snd_settle_mode=UByte(0),
                               rcv_settle_mode=UByte(0), source=c.Source(address=LONG_CID),
                               target=c.Target(address=LONG_ADDRESS),
                               initial_delivery_count=None if role else UInt(0))))
        send(S2C, f(c.Flow(next_incoming_id=UInt(0), incoming_window=UInt(65535),
                           next_outgoing_id=UInt(0), outgoing_window=UInt(65535), handle=UInt(0),
                           delivery_count=UInt(0), link_credit=UInt(100))))
        for i in range(12):
            send(C2S, f(c.Transfer(handle=UInt(0), delivery_id=UInt(i), delivery_tag=bytes(range(i, i + 16)),
                                   message_format=UInt(0), settled=False), 0,
                        Message(c.AmqpValue(f"m{i}")).encode()))
        send(S2C, f(c.Disposition(role=True, first=UInt(0), last=UInt(3), settled=False,
                                  state=c.Rejected(error=c.Error(condition=Symbol("amqp:precondition-failed"))))))
    return path


async def _show(app: AmqpTui, pilot: Any, link: str | None = None) -> str:
    await pilot.pause()
    app.pull()
    assert app.select_link(link or app.conn_tree.link_keys[0])
    await pilot.pause()
    app.pull()
    await pilot.pause()
    return screen_text(app)


def _line_with(text: str, *words: str) -> str:
    """The one screen line holding all of `words`."""
    lines = [line for line in text.splitlines() if all(w in line for w in words)]
    assert lines, f"no line with {words} in:\n{text}"
    return lines[0]


def test_80x24_shows_the_key_columns_whole(synth: Path) -> None:
    async def run() -> str:
        app = replay_app(synth)
        async with app.run_test(size=(80, 24)) as pilot:
            return await _show(app, pilot, ORDERS)

    text = asyncio.run(run())
    # The unsettled table: every column's header whole, on one line, and its rows.
    _line_with(text, *COLUMNS)
    for i in (57, 58, 59):
        row = _line_with(text, f" {i} ", f"0x{i:08x}")
        assert "…" not in row
    # The tree (above the tabs): the link's name and its counters.
    _line_with(text, "→ orders-sender", "u:3", "c:10")
    _line_with(text, "← replies-receiver", "u:2")
    # The flow line, the replay bar and the footer, nothing cut off at the right.
    _line_with(text, "outcomes accepted 57")
    _line_with(text, "frame 81/81", "speed 1×")
    _line_with(text, "? Help", "g Jump")


def test_outcomes_and_ellipsized_tags_at_80x24(long_names: Path) -> None:
    async def run() -> tuple[str, str]:
        app = replay_app(long_names)
        async with app.run_test(size=(80, 24)) as pilot:
            text = await _show(app, pilot)
            table = app.query_one(UnsettledTable)
            table.focus()
            await pilot.press("enter")  # the first delivery, in the delivery tab
            await pilot.pause()
            assert app.tabs.active == "delivery"
            return text, screen_text(app)

    link, delivery = asyncio.run(run())
    row = _line_with(link, " 0 ", "rejected")
    assert "0x0001" in row and "…" in row and TAG0 not in row  # the tag cut, ...
    assert TAG0 in delivery  # ... and whole in the delivery's pane


def test_a_long_link_name_is_cut_with_an_ellipsis_and_shown_whole(long_names: Path) -> None:
    async def run(size: tuple[int, int]) -> str:
        app = replay_app(long_names)
        async with app.run_test(size=size) as pilot:
            return await _show(app, pilot)

    for size in ((80, 24), (120, 40)):
        text = asyncio.run(run(size))
        tree_row = _line_with(text, "→ send", "u:12").split("│")[0]  # the tree's part
        assert "…" in tree_row and LONG_LINK not in tree_row
        assert "d:12 u:12 c:88" in tree_row  # the counters, whole: the name gave way
        # The link's pane has the whole name (its title wraps after it on 80 columns).
        assert LONG_LINK in text


def test_long_values_are_whole_in_the_connection_pane(long_names: Path) -> None:
    async def run() -> str:
        app = replay_app(long_names)
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            app.pull()
            assert app.conn_tree.select_key("c1")
            await pilot.pause()
            app.pull()
            await pilot.pause()
            return screen_text(app)

    text = asyncio.run(run())
    # A container-id wider than its column folds onto the next lines: every character shown.
    lines = text.splitlines()
    line = _line_with(text, "container-id")
    start = lines.index(line)
    left, right = line.index('"container-'), line.index('"broker"')
    folded = "".join(row[left:right].strip() for row in lines[start:start + 4])
    assert f'"{LONG_CID}"' in folded


def test_the_tree_goes_above_the_tabs_below_110_columns_and_t_hides_it(synth: Path) -> None:
    async def run() -> None:
        app = replay_app(synth)
        async with app.run_test(size=(120, 40)) as pilot:
            await _show(app, pilot, ORDERS)
            tree, tabs = app.conn_tree.region, app.tabs.region
            assert tree.right <= tabs.x and tree.y == tabs.y  # side by side
            assert not app.footer.compact
            await pilot.resize_terminal(80, 24)
            await pilot.pause()
            tree, tabs = app.conn_tree.region, app.tabs.region
            assert tree.bottom <= tabs.y and tree.width == tabs.width == 80  # stacked
            assert app.footer.compact  # keys closer together
            await pilot.press("t")
            await pilot.pause()
            assert not app.conn_tree.display and app.tabs.region.height > tabs.height
            await pilot.press("t")
            await pilot.pause()
            assert app.conn_tree.display

    asyncio.run(run())


def test_a_tab_key_from_the_focused_table_shows_that_tab(synth: Path) -> None:
    async def run() -> None:
        app = replay_app(synth)
        async with app.run_test(size=(80, 24)) as pilot:
            await _show(app, pilot, ORDERS)
            app.query_one(UnsettledTable).focus()
            await pilot.press("2")
            await pilot.pause()
            assert app.tabs.active == "delivery"
            await pilot.press("3")
            await pilot.pause()
            assert app.tabs.active == "frames"

    asyncio.run(run())


@pytest.mark.parametrize("size", [(60, 20), (40, 15), (24, 8)])
def test_smaller_terminals_work_without_an_exception(synth: Path, size: tuple[int, int]) -> None:
    async def run() -> list[str]:
        app = replay_app(synth)
        seen = []
        async with app.run_test(size=size) as pilot:
            seen.append(await _show(app, pilot, ORDERS))
            app.query_one(UnsettledTable).focus()
            await pilot.press("down", "enter")
            await pilot.pause()
            assert app.tabs.active == "delivery"
            seen.append(screen_text(app))
            for key in ("x", "3", "1", "t", "question_mark"):
                await pilot.press(key)
                await pilot.pause()
                app.pull()
                seen.append(screen_text(app))
            assert isinstance(app.screen, HelpScreen)
            await pilot.press("escape")
            await pilot.resize_terminal(30, 6)
            await pilot.pause()
            await pilot.resize_terminal(*size)
            await pilot.pause()
            app.pull()
            seen.append(screen_text(app))
        assert app.return_code is None  # no exception ended it
        return seen

    screens = asyncio.run(run())
    if size[0] >= 40:
        _line_with(screens[0], "frame 81/81")  # the replay bar keeps the position
        _line_with(screens[0], "id", "tag")


# -- the pieces, alone -----------------------------------------------------------------------


def _cells(tag: str, state: str) -> tuple[object, ...]:
    return (Text("4000000000"), Text(tag), "1.5s", Text(state), Text("-"), Text("receiver"))


@pytest.mark.parametrize("width", [200, 120, 78, 60])
def test_column_widths_fit_and_keep_the_key_columns_whole(width: int) -> None:
    rows = [_cells(TAG0, "rejected: amqp:precondition-failed: " + "x" * 80)]
    widths = dict(zip(COLUMNS, column_widths(rows, width), strict=True))
    assert sum(widths.values()) + 2 * len(COLUMNS) + 2 <= width
    assert widths["id"] == 10 and widths["age"] == 6 and widths["settled"] == len("receiver")
    assert widths["tag"] >= 6 and widths["sender state"] >= 8
    if width >= 78:
        assert widths["receiver state"] == len("receiver state")  # its header whole
    if width >= 120:
        assert widths["tag"] == len(TAG0)  # the widest gives way first


def test_column_widths_without_a_width_are_what_the_values_need() -> None:
    widths = column_widths([_cells("0x01", "accepted")], None)
    assert widths == (10, 4, 6, len("sender state"), len("receiver state"), len("receiver"))


@pytest.mark.parametrize("width", [118, 78, 58, 38, 20, 12])
def test_replay_bar_fits_its_width_and_keeps_the_frame(width: int) -> None:
    t = bar_text(1200, 43210, 12.5, 300.25, 2.0, True, width)
    assert t.cell_len <= width
    if width >= 20:
        assert "frame 1200/43210" in t.plain
    if width >= 78:
        assert "░" in t.plain and "speed 2×" in t.plain


@pytest.mark.parametrize("width", [80, 50, 36, 24])
def test_link_label_fits_its_width(width: int) -> None:
    row = LinkRow("k", LONG_LINK, "sender", "0/0", 1234, 56, 789, 12.0, ["no credit"])
    t = link_label(row, width)
    assert t.cell_len <= width
    # the name gives way: the counters stay whole, however narrow
    assert "…" in t.plain and "  d:1234 u:56 c:789" in t.plain
    assert t.plain.startswith("⚠ → se" if width >= 36 else "⚠ → ")
    if width >= 36:
        assert "12/s" in t.plain
