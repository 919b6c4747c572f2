"""Strings a peer or a capture chooses are shown literally: never read as markup, and their
control characters escaped (nothing of theirs reaches the terminal as a control sequence)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from amqpcli.capture.tcp import C2S, S2C
from amqpcli.capture.writer import CaptureWriter, TcpConversation
from amqpcli.codec import composites as c
from amqpcli.codec.frames import encode_frame, encode_protocol_header
from amqpcli.codec.message import Message
from amqpcli.codec.types import Symbol, UByte, UInt, UShort
from amqpcli.tui.app import AmqpTui
from amqpcli.tui.widgets.link import LinkPanel, UnsettledTable
from tests.tui.replaying import replayed
from tests.tui.screen import screen_text

CID = "[/bold]evil[red]\x1b[31mclient"
HOST = "[/]h"
LINK = "odd\nname\x1b[31m[b]x"
CLOSE = "[/] close [x]\x1b]0;pwned\x07"
REJECT = "[/bold] oops\r\n[red]"


def _capture(path: Path) -> None:
    with CaptureWriter(path, linktype=101) as w:
        conv = TcpConversation(w, ("127.0.0.1", 40001), ("127.0.0.1", 5672), step_ns=50_000)
        conv.handshake()

        def send(d: int, *parts: bytes) -> None:
            conv.send(d, b"".join(parts), mss=65000, ack=False)  # type: ignore[arg-type]

        f = encode_frame
        send(C2S, encode_protocol_header("amqp"),
             f(c.Open(container_id=CID, hostname=HOST, max_frame_size=UInt(65536),
                      properties={Symbol("product"): "[/]x\x1b[2J"})))
        send(S2C, encode_protocol_header("amqp"), f(c.Open(container_id="broker[/]")))
        send(C2S, f(c.Begin(next_outgoing_id=UInt(0), incoming_window=UInt(65535),
                            outgoing_window=UInt(65535))))
        send(S2C, f(c.Begin(remote_channel=UShort(0), next_outgoing_id=UInt(0),
                            incoming_window=UInt(65535), outgoing_window=UInt(65535))))
        send(C2S, f(c.Attach(name=LINK, handle=UInt(0), role=False, snd_settle_mode=UByte(0),
                             rcv_settle_mode=UByte(0), source=c.Source(address="src\x1b[1m"),
                             target=c.Target(address="[/]q"), initial_delivery_count=UInt(0))))
        send(S2C, f(c.Attach(name=LINK, handle=UInt(0), role=True, snd_settle_mode=UByte(0),
                             rcv_settle_mode=UByte(0), source=c.Source(address="src\x1b[1m"),
                             target=c.Target(address="[/]q"))),
             f(c.Flow(next_incoming_id=UInt(0), incoming_window=UInt(65535),
                      next_outgoing_id=UInt(0), outgoing_window=UInt(65535), handle=UInt(0),
                      delivery_count=UInt(0), link_credit=UInt(100))))
        for i in range(2):
            msg = Message(c.AmqpValue(f"m{i}"), properties=c.Properties(subject="[/]s\x1b[0m"))
            send(C2S, f(c.Transfer(handle=UInt(0), delivery_id=UInt(i), delivery_tag=bytes([i]),
                                   message_format=UInt(0), settled=False), 0, msg.encode()))
        send(S2C, f(c.Disposition(role=True, first=UInt(0), last=UInt(0), settled=True,
                                  state=c.Rejected(error=c.Error(condition=Symbol("amqp:[/]bad"),
                                                                 description=REJECT)))))
        send(C2S, f(c.Close(error=c.Error(condition=Symbol("amqp:internal-error"),
                                          description=CLOSE))))
        send(S2C, f(c.Close()))
        conv.close()



def _assert_clean(text: str) -> None:
    bad = {ch for ch in text if (ord(ch) < 32 and ch != "\n") or 0x7f <= ord(ch) < 0xa0}
    assert not bad, f"control characters reached the screen: {sorted(map(repr, bad))}"


def test_printable_escapes_control_characters() -> None:
    from amqpcli.tui.widgets.safe import literal, printable

    assert printable("a\nb\x1b[31m\x07\t\r\x7f\x9b\u202e") == "a\\nb\\x1b[31m\\x07\\t\\r\\x7f\\x9b\\u202e"
    assert printable("[/bold] ü → ok") == "[/bold] ü → ok"
    assert literal("[/]x").plain == "[/]x"


def test_peer_strings_are_shown_literally_and_escaped(tmp_path: Path) -> None:
    path = tmp_path / "odd.pcapng"
    _capture(path)
    src = replayed(path)

    async def run() -> None:
        app = AmqpTui(src)
        async with app.run_test(size=(160, 50)) as pilot:
            await pilot.pause()
            app.pull()
            # The connection row: its open, close errors and properties (markup crashed here).
            app.conn_tree.focus()
            await pilot.press("home")
            await pilot.pause()
            app.pull()
            await pilot.pause()
            panel = app.query_one(LinkPanel)
            assert panel.conn is not None
            text = screen_text(app)
            _assert_clean(text)
            assert '"[/bold]evil[red]' in text and '"[/]h"' in text
            assert "[/] close [x]\\x1b]0;pwned\\x07" in text
            # The link: one tree row with its counters, title and termini escaped.
            (key,) = app.conn_tree.link_keys
            assert app.select_link(key)
            await pilot.pause()
            app.pull()
            await pilot.pause()
            text = screen_text(app)
            _assert_clean(text)
            row = next(line for line in text.splitlines() if "odd\\nname" in line)
            assert "d:2 u:0" in row
            # The delivery still open before the closes (the last 4 records), with its timeline.
            src.controller.seek(len(src.controller) - 4)
            app.pull()
            await pilot.pause()
            app.query_one(UnsettledTable).focus()
            await pilot.press("home", "enter")
            await pilot.pause()
            app.pull()
            await pilot.pause()
            assert app.delivery_panel.detail is not None
            _assert_clean(screen_text(app))
            # The frame log and the palette's link commands.
            await pilot.press("3")
            await pilot.pause()
            _assert_clean(screen_text(app))
            titles = [cmd.title for cmd in app.get_system_commands(app.screen)]
            assert any("odd\\nname\\x1b" in t for t in titles)

    asyncio.run(run())


def test_notices_from_peers_are_not_markup(fake_source) -> None:
    from amqpcli.errors import Exit, UserError
    from amqpcli.tui.messages import SourceFailed, SourceNotice

    async def run() -> None:
        app = AmqpTui(fake_source)
        async with app.run_test(size=(120, 40)) as pilot:
            app.post_message(SourceNotice("ConnectionLost: [/bold] gone\x1b[2J", "error"))
            app.post_message(SourceFailed(UserError("cannot connect: [/] refused\x1b]0;x\x07",
                                                      Exit.CONNECTION)))
            await pilot.pause()
            app.pull()
            await pilot.pause(0.2)
            text = screen_text(app)
            _assert_clean(text)
            notes = [n.message for n in app._notifications]
            assert "ConnectionLost: [/bold] gone\\x1b[2J" in notes
            assert "refused\\x1b]0;x\\x07" in text  # the title

    asyncio.run(run())


def test_control_characters_in_a_link_name_are_escaped_in_its_tree_row(fake_source) -> None:
    from tests.tui.conftest import rows

    class OddNames(type(fake_source)):  # type: ignore[misc]
        def snapshot(self, link, delivery, now, conn=None):  # type: ignore[no-untyped-def]
            snap = super().snapshot(link, delivery, now, conn=conn)
            snap.tree = rows()
            snap.tree[0].sessions[0].links[0].name = "odd\nname\x1b[31mx"
            return snap

    async def run() -> None:
        app = AmqpTui(OddNames())
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            text = screen_text(app)
            _assert_clean(text)
            # the name is cut in the middle for the counters: both its ends escaped
            row = next(line for line in text.splitlines() if "odd\\n" in line)
            assert "\\x1b[31mx" in row and "d:10 u:3 c:90" in row

    asyncio.run(run())
