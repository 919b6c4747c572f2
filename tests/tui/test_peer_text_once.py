"""A peer's text is escaped once in every pane, as pcap-dump shows it: a value the frame
lines quote (`container-id="evil\\x1b[31m"`) was escaped again by the pane showing it
(`"evil\\\\x1b[31m"`, a backslash shown where the peer sent an ESC)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from amqpcli.capture.tcp import C2S, S2C
from amqpcli.capture.writer import CaptureWriter, TcpConversation
from amqpcli.codec import composites as c
from amqpcli.codec.frames import encode_frame, encode_protocol_header
from amqpcli.codec.message import Message
from amqpcli.codec.types import Symbol, UByte, UInt, UShort
from amqpcli.render.text import format_value, printable
from amqpcli.tui.app import AmqpTui
from amqpcli.tui.widgets.link import UnsettledTable
from tests.tui.replaying import replayed
from tests.tui.screen import screen_text

CID = "cid\x1b[31m[b]x[/b]\\e"
HOST = "host\x07[i]"
LINK = "lnk\x1b[2J[u]"
ADDR = "addr\n\x1b[5m"
DESC = "boom\x1b]0;t\x07[/]"
TAG = b"tag\x00"


def _capture(path: Path) -> None:
    with CaptureWriter(path, linktype=101) as w:
        conv = TcpConversation(w, ("127.0.0.1", 40001), ("127.0.0.1", 5672), step_ns=50_000)
        conv.handshake()

        def send(d: int, *parts: bytes) -> None:
            conv.send(d, b"".join(parts), mss=65000, ack=False)  # type: ignore[arg-type]

        f = encode_frame
        send(C2S, encode_protocol_header("amqp"), f(c.Open(container_id=CID, hostname=HOST)))
        send(S2C, encode_protocol_header("amqp"), f(c.Open(container_id="broker")))
        send(C2S, f(c.Begin(next_outgoing_id=UInt(0), incoming_window=UInt(100),
                            outgoing_window=UInt(100))))
        send(S2C, f(c.Begin(remote_channel=UShort(0), next_outgoing_id=UInt(0),
                            incoming_window=UInt(100), outgoing_window=UInt(100))))
        attach = {"name": LINK, "handle": UInt(0), "snd_settle_mode": UByte(0),
                  "rcv_settle_mode": UByte(0), "source": c.Source(address="src"),
                  "target": c.Target(address=ADDR)}
        send(C2S, f(c.Attach(role=False, initial_delivery_count=UInt(0), **attach)))
        send(S2C, f(c.Attach(role=True, **attach)),
             f(c.Flow(next_incoming_id=UInt(0), incoming_window=UInt(100), next_outgoing_id=UInt(0),
                      outgoing_window=UInt(100), handle=UInt(0), delivery_count=UInt(0),
                      link_credit=UInt(1))))
        for i, tag in enumerate((TAG, b"\x01")):  # the second beyond credit: a violation
            send(C2S, f(c.Transfer(handle=UInt(0), delivery_id=UInt(i), delivery_tag=tag,
                                   message_format=UInt(0), settled=False), 0,
                        Message(c.AmqpValue("m")).encode()))
        send(C2S, f(c.Close(error=c.Error(condition=Symbol("amqp:internal-error"),
                                          description=DESC))))
        send(S2C, f(c.Close()))
        conv.close()


def _once(text: str, value: str | bytes, quoted: bool = False) -> None:
    """`value` is on screen escaped once (quoted as the frame lines quote it when
    `quoted`), never escaped twice, its markup shown as text."""
    once = format_value(value) if quoted else printable(value)
    assert once in text, f"{once!r} not on screen"
    assert printable(once) not in text, f"{once!r} escaped twice"


def test_peer_text_is_escaped_once_in_every_pane(tmp_path: Path) -> None:
    path = tmp_path / "once.pcapng"
    _capture(path)
    src = replayed(path)

    async def run() -> None:
        app = AmqpTui(src)
        async with app.run_test(size=(200, 50)) as pilot:
            async def shown() -> str:
                app.pull()
                await pilot.pause()
                app.pull()
                await pilot.pause()
                return screen_text(app)

            app.conn_tree.focus()
            await pilot.press("home")
            text = await shown()
            assert app.link_panel.conn is not None
            _once(text, CID, quoted=True)
            _once(text, HOST, quoted=True)
            _once(text, DESC)
            # the violation line names the link as pcap-dump's violation line does
            line = next(v for v in app.link_panel.conn.violations)
            assert f"'{printable(LINK)}'" in line and "\\\\" not in line
            assert f"'{printable(LINK)}'" in text
            (key,) = app.conn_tree.link_keys
            # before the closes: the link's unsettled table still lists the tag
            app.goto("11")  # the second transfer
            await app.workers.wait_for_complete()
            assert app.select_link(key)
            text = await shown()
            _once(text, LINK)  # the tree row and the title
            _once(text, ADDR, quoted=True)  # the target
            assert format_value(TAG) in text  # the tag, as the frame lines show it
            assert printable(format_value(TAG)) not in text
            app.query_one(UnsettledTable).focus()
            await pilot.press("home", "enter")
            text = await shown()
            assert app.delivery_panel.detail is not None
            title = app.delivery_panel.detail.title
            assert title == f"delivery id 0 tag {format_value(TAG)} on {printable(LINK)}"
            assert title in text

    asyncio.run(run())
