"""The adapter: engine model → rows, on hand-fed frames (violations, termini, connection facts)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from amqpcli.codec import composites as c
from amqpcli.codec.frames import FrameReader, encode_frame, encode_protocol_header
from amqpcli.codec.types import Symbol, UByte, UInt, UShort
from amqpcli.tui import adapter
from amqpcli.tui.app import AmqpTui
from amqpcli.tui.store import FrameRecord
from amqpcli.tui.watch import ConnWatch
from amqpcli.tui.widgets.link import LinkPanel
from tests.tui.replaying import replayed


def _feed(cw: ConnWatch, side: str, data: bytes, t: float = 1.0) -> None:
    for item in FrameReader().feed(data):
        cw.feed(side, item, t)


def _opened() -> ConnWatch:
    cw = ConnWatch("c9", "a -> b")
    _feed(cw, "client", encode_protocol_header("amqp") + encode_frame(c.Open(container_id="app"))
          + encode_frame(c.Begin(next_outgoing_id=UInt(0), incoming_window=UInt(10),
                                 outgoing_window=UInt(10))))
    _feed(cw, "server", encode_protocol_header("amqp") + encode_frame(c.Open(container_id="broker"))
          + encode_frame(c.Begin(remote_channel=UShort(0), next_outgoing_id=UInt(0),
                                 incoming_window=UInt(10), outgoing_window=UInt(10))))
    return cw


def test_violations_reach_the_tree_and_the_connection_view() -> None:
    cw = _opened()
    # A disposition for a delivery nobody sent.
    _feed(cw, "server", encode_frame(c.Disposition(role=True, first=UInt(7), settled=True,
                                                   state=c.Accepted())))
    (row,) = adapter.tree_rows([("c9", cw)], 1.0, adapter.RateMeter(), False)
    assert row.violations and "7" in row.violations[0]
    detail = adapter.conn_detail(cw)
    assert detail.violations_total == 1 and detail.violations[0].startswith("server: ")
    fields = {what: (a, b) for what, a, b in detail.fields}
    assert fields["container-id"] == ('"app"', '"broker"')
    assert fields["state"] == ("opened", "opened")


def test_refused_link_and_termini_differences() -> None:
    cw = _opened()
    _feed(cw, "client", encode_frame(c.Attach(name="l", handle=UInt(0), role=True,
                                              source=c.Source(address="q", durable=UInt(2)),
                                              target=c.Target())))
    _feed(cw, "server", encode_frame(c.Attach(name="l", handle=UInt(0), role=False,
                                              source=c.Source(address="q", durable=UInt(0)),
                                              target=c.Target(), initial_delivery_count=UInt(0))))
    (row,) = adapter.tree_rows([("c9", cw)], 1.0, adapter.RateMeter(), False)
    (lrow,) = row.sessions[0].links
    assert lrow.role == "receiver" and "no credit" in lrow.warnings
    found = adapter.find_link([("c9", cw)], lrow.key)
    assert found is not None
    detail = adapter.link_detail(*found, now=1.0, ours=False)
    diffs = {r.field for r in detail.source if r.differs}
    assert diffs == {"durable"}


@pytest.mark.parametrize(("code", "name"), [(1, "auth"), (2, "sys"), (3, "sys-perm"), (4, "sys-temp")])
def test_a_refused_login_is_named_as_the_frame_log_names_it(code: int, name: str) -> None:
    cw = ConnWatch("c9", "a -> b")
    _feed(cw, "client", encode_protocol_header("sasl"))
    _feed(cw, "server", encode_protocol_header("sasl") + encode_frame(
        c.SaslMechanisms(sasl_server_mechanisms=[Symbol("PLAIN")]), type=1))
    _feed(cw, "client", encode_frame(c.SaslInit(mechanism=Symbol("PLAIN"),
                                                initial_response=b"\0guest\0wrong"), type=1))
    outcome = FrameReader().feed(encode_frame(c.SaslOutcome(code=UByte(code)), type=1))[0]
    cw.feed("server", outcome, 1.0)
    cw.ended = "closed"  # as the proxy marks a connection whose both streams ended
    assert f"code={name}" in adapter.frame_line(FrameRecord(0, 1.0, "c9", "server", outcome)).plain
    (row,) = adapter.tree_rows([("c9", cw)], 1.0, adapter.RateMeter(), False)
    assert row.label == f"c9 [login refused ({name}), closed] a -> b"
    detail = adapter.conn_detail(cw)
    assert detail.title == f"c9 a -> b   [login refused ({name}), closed]"
    fields = {what: (a, b) for what, a, b in detail.fields}
    assert fields["sasl outcome"] == ("", f"{name}: login refused")


def test_connection_node_shows_connection_facts(testdata: Path) -> None:
    src = replayed(testdata / "captures" / "rabbitmq-sasl-plain-send-recv.pcapng")

    async def run() -> None:
        app = AmqpTui(src)
        async with app.run_test(size=(140, 44)) as pilot:
            assert app.conn_tree.select_key("c1")
            await pilot.pause()
            app.pull()
            panel = app.query_one(LinkPanel)
            assert panel.detail is None and panel.conn is not None
            fields = {what: (a, b) for what, a, b in panel.conn.fields}
            assert fields["sasl"][0] == "chose PLAIN"
            assert fields["state"] == ("closed", "closed")
            assert panel.conn.violations_total == 0

    asyncio.run(run())


def test_rate_meter() -> None:
    m = adapter.RateMeter(window=1.0)
    assert m.rate("l", 0, 100.0) == 0.0
    assert m.rate("l", 50, 100.5) == 0.0  # window not yet full: last rate stays
    assert m.rate("l", 300, 102.0) == 150.0
    assert m.rate("l", 300, 102.5) == 150.0
    assert m.rate("l", 10, 90.0) == 0.0  # a replay went back: start again
