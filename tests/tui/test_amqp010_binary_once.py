"""An AMQP 0-10 binary value is escaped once in the panes, as pcap-dump shows it: the
connection pane (and the delivery pane's header fields and body) wrote it as the frame
lines do (`b"a\\\\x1b…"`) and the widget escaped that again (`b\\"a\\\\\\\\x1b…`), a
backslash shown for each escape's backslash."""

from __future__ import annotations

import asyncio
from pathlib import Path

from amqpcli.amqp010 import PROTOCOL_HEADER, Command, Control, Struct, encode_assembly
from amqpcli.render.text import format_binary, printable
from amqpcli.render.types import quoted
from tests.dissect.helpers import C2S, S2C, Script, write
from tests.net.clirun import amqp_in_process
from tests.tui.replaying import replay_app
from tests.tui.screen import screen_text

# printable bytes that escape (a backslash, a quote), markup, a NUL: b"…" text, not hex
HOSTILE = b'a\\x1b[31m"[b]\0z'
BODY = b'body\\n"[i]\0'
# a nested map in a header struct: a string with a control character, and a binary
TEXT, BINARY = "a\x1b[1m", b'x\\"\0y'
HEADERS = {"s": TEXT, "b": BINARY}


def _capture(path: Path) -> Path:
    s = Script()

    def c(method: Control | Command, ch: int = 0, **kw: object) -> None:
        s.raw(C2S, encode_assembly(method, ch, **kw))  # type: ignore[arg-type]

    def srv(method: Control | Command, ch: int = 0, **kw: object) -> None:
        s.raw(S2C, encode_assembly(method, ch, **kw))  # type: ignore[arg-type]

    s.raw(C2S, PROTOCOL_HEADER).raw(S2C, PROTOCOL_HEADER)
    srv(Control.make("connection.start", mechanisms=["ANONYMOUS"],
                     server_properties={"product": HOSTILE}))
    c(Control.make("connection.start-ok", mechanism="ANONYMOUS", response=b""))
    srv(Control.make("connection.secure", challenge=HOSTILE))
    c(Control.make("connection.tune-ok", channel_max=10))
    c(Control.make("connection.open", virtual_host="/"))
    srv(Control.make("connection.open-ok"))
    c(Control.make("session.attach", name=b"s1"), 1)
    srv(Control.make("session.attached", name=b"s1"), 1)
    c(Command.make("message.transfer", destination="d1"), 1,
      header=(Struct.make("message.message-properties", correlation_id=HOSTILE,
                          application_headers=HEADERS),),
      body=BODY)
    write(path, s)
    return path


def test_a_binary_value_shows_as_pcap_dump_shows_it(tmp_path: Path) -> None:
    path = _capture(tmp_path / "binary.pcap")
    once = format_binary(HOSTILE)
    assert "\\\\" in once and "\\x00" in once  # escaped (once) by format_binary
    code, dump, _ = amqp_in_process("pcap-dump", str(path))
    assert code == 0
    assert f"challenge={once}" in dump and f"product={once}" in dump
    app = replay_app(path)

    async def run() -> None:
        async with app.run_test(size=(200, 50)) as pilot:
            await pilot.pause()
            app.pull()
            assert app.conn_tree.select_key("c1")
            await pilot.press("1")
            await pilot.pause()
            app.pull()
            await pilot.pause()
            conn = app.link_panel.conn
            assert conn is not None
            fields = [text for row in conn.fields for text in row[1:]]
            assert f"challenge: {once}" in fields
            assert f"server-properties: product={once}" in fields
            text = screen_text(app)
            assert f"challenge: {once}" in text
            assert f"product={once}" in text
            assert printable(once) not in text  # never escaped twice

            # the delivery pane: its header field and body, as the frame line's body
            (link,) = app.conn_tree.conn_rows[0].sessions[0].links
            assert app.select_link(link.key)
            await pilot.pause()
            app.pull()
            await pilot.pause()
            assert app.link_panel.detail is not None
            app.delivery_key = app.link_panel.detail.unsettled[0].key
            await pilot.press("2")
            app.pull()
            await pilot.pause()
            text = screen_text(app)
            assert f"correlation-id: {once}" in text
            assert f"body: {body}  ({len(BODY)} bytes)" in text
            assert printable(once) not in text and printable(body) not in text
            # the nested map: its entries as the frame line writes them, not a repr
            assert f"application-headers: {headers}" in text
            assert printable(headers) not in text and "'binary'" not in text

    body = format_binary(BODY)
    headers = f"{{s={quoted(TEXT)}, b={format_binary(BINARY)}}}"
    assert "\\x1b" in headers and "\\\\x1b" not in headers
    assert f"application-headers={headers}" in dump
    assert f"correlation-id={once}" in dump and f"| body {body} ({len(BODY)} bytes)" in dump
    asyncio.run(run())

