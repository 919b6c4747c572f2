"""Terminus capabilities are drawn so that one capability holding a comma (`"a,b"`) and two
capabilities (`a,b`) never read alike: a name that is not one plain word is quoted, the
common ones (`caps=topic`, `caps=queue,shared`) are drawn as they always were. The frame
line, the TUI's terminus and connection rows and the link notes draw them one way."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from amqpcli.codec import composites as c
from amqpcli.codec.frames import FrameReader, encode_frame, encode_protocol_header
from amqpcli.codec.types import Array, Symbol, UInt, UShort
from amqpcli.render.frameline import _field
from amqpcli.render.types import capabilities_text
from amqpcli.tui import adapter
from amqpcli.tui.watch import ConnWatch
from tests.dissect.helpers import RECEIVER, SENDER, Script, dissect, write


def _target(caps: Any) -> str | None:
    return _field(c.Attach(name="l", handle=UInt(0), role=False,
                           target=c.Target(address="t", capabilities=caps)), "target")


@pytest.mark.parametrize(("caps", "text"), [
    (Symbol("topic"), 'target=("t" caps=topic)'),
    ([Symbol("queue"), Symbol("shared")], 'target=("t" caps=queue,shared)'),
    (Array([Symbol("amqp:local-transactions"), Symbol("ANONYMOUS-RELAY")], "symbol"),
     'target=("t" caps=amqp:local-transactions,ANONYMOUS-RELAY)'),
    ([Symbol("topic://news.*"), Symbol("x_y.z@h#1")], 'target=("t" caps=topic://news.*,x_y.z@h#1)'),
    ([Symbol("a,b")], 'target=("t" caps="a,b")'),
    ([Symbol("a"), Symbol("b")], 'target=("t" caps=a,b)'),
    ([Symbol("two words"), Symbol("q")], 'target=("t" caps="two words",q)'),
    ([Symbol('say "hi"'), Symbol("f(x)"), Symbol("")], 'target=("t" caps="say \\"hi\\"","f(x)","")'),
    ([Symbol("line\nbreak"), Symbol("x=1")], 'target=("t" caps="line\\nbreak","x=1")'),
])
def test_frame_line_capabilities(caps: Any, text: str) -> None:
    assert _target(caps) == text


def test_one_capability_with_a_comma_is_not_two() -> None:
    one = _target([Symbol("a,b")])
    two = _target([Symbol("a"), Symbol("b")])
    assert one != two
    assert capabilities_text([Symbol("a, b")]) != capabilities_text([Symbol("a"), Symbol(" b")])


def _fed(*frames: tuple[str, Any]) -> ConnWatch:
    cw = ConnWatch("c9", "a -> b")
    cap = Array([Symbol("ANONYMOUS-RELAY"), Symbol("a,b")], "symbol")
    opening = [
        ("client", c.Open(container_id="app")),
        ("server", c.Open(container_id="broker", offered_capabilities=cap)),
        ("client", c.Begin(next_outgoing_id=UInt(0), incoming_window=UInt(10),
                           outgoing_window=UInt(10))),
        ("server", c.Begin(remote_channel=UShort(0), next_outgoing_id=UInt(0),
                           incoming_window=UInt(10), outgoing_window=UInt(10))),
    ]
    header = {"client": False, "server": False}
    for side, perf in [*opening, *frames]:
        data = encode_frame(perf)
        if not header[side]:
            data = encode_protocol_header("amqp") + data
            header[side] = True
        for item in FrameReader().feed(data):
            cw.feed(side, item, 1.0)
    return cw


def test_tui_rows_draw_capabilities_as_the_frame_line_does() -> None:
    cw = _fed(
        ("client", c.Attach(name="l", handle=UInt(0), role=False, source=c.Source(address="me"),
                            target=c.Target(address="t", capabilities=[Symbol("a,b"),
                                                                       Symbol("queue")]),
                            initial_delivery_count=UInt(0))),
        ("server", c.Attach(name="l", handle=UInt(0), role=True, source=c.Source(address="me"),
                            target=c.Target(address="t", capabilities=[Symbol("a"),
                                                                       Symbol("b")]))),
    )
    fields = {what: (a, b) for what, a, b in adapter.conn_detail(cw).fields}
    assert fields["offered-capabilities"] == ("", 'ANONYMOUS-RELAY,"a,b"')
    (row,) = adapter.tree_rows([("c9", cw)], 1.0, adapter.RateMeter(), False)
    found = adapter.find_link([("c9", cw)], row.sessions[0].links[0].key)
    assert found is not None
    detail = adapter.link_detail(*found, now=1.0, ours=False)
    caps = next(r for r in detail.target if r.field == "capabilities")
    assert (caps.requested, caps.granted) == ('"a,b",queue', "a,b") and caps.differs


def test_the_link_note_draws_capabilities_as_the_frame_line_does(tmp_path: Path) -> None:
    s = Script().open()
    s.c(c.Attach(name="to-q", handle=0, role=SENDER, source=c.Source(address="me"),
                 target=c.Target(address="q", capabilities=[Symbol("queue"), Symbol("a,b")]),
                 initial_delivery_count=0))
    s.s(c.Attach(name="to-q", handle=0, role=RECEIVER, source=c.Source(address="me"),
                 target=c.Target(address="q", capabilities=[Symbol("queue")])))
    (note,) = dissect(write(tmp_path / "caps.pcapng", s.close())).notices
    assert note.text == ("link 'to-q': server granted differently: target.capabilities: "
                         'asked queue,"a,b", granted queue (capabilities dropped)')
