"""Deliveries still open when the capture stops are `unsettled` (the capture ended, not the
connection) whichever side sends them, and a delivery that was never settled has no
settlement time and no latency in the link's percentiles."""

from __future__ import annotations

from pathlib import Path

from amqpcli.capture.tcp import S2C
from amqpcli.codec import composites as c
from amqpcli.codec.frames import encode_frame
from amqpcli.codec.message import Message
from tests.dissect.helpers import RECEIVER, SENDER, Script, dissect, write


def _server_sends(n: int) -> Script:
    s = Script()
    s.sasl_plain().open()
    s.c(c.Attach(name="rcv", handle=0, role=RECEIVER, snd_settle_mode=0, rcv_settle_mode=0,
                 source=c.Source(address="q1"), target=c.Target()))
    s.s(c.Attach(name="rcv", handle=0, role=SENDER, snd_settle_mode=0, rcv_settle_mode=0,
                 source=c.Source(address="q1"), target=c.Target(), initial_delivery_count=0))
    s.c(c.Flow(next_incoming_id=0, incoming_window=1000, next_outgoing_id=0,
               outgoing_window=1000, handle=0, delivery_count=0, link_credit=10))
    for i in range(n):
        s.raw(S2C, encode_frame(c.Transfer(handle=0, delivery_id=i, delivery_tag=b"t%d" % i,
                                           message_format=0), 0, Message(body="m").encode()))
    return s


def _client_sends(n: int, accepted: int) -> Script:
    s = Script()
    s.sasl_plain().open().sender_link()
    for i in range(n):
        s.transfer(i)
    for i in range(accepted):
        s.dispose(i, c.Accepted())
    return s


def test_server_sent_deliveries_open_at_the_capture_end_are_unsettled(tmp_path: Path) -> None:
    r = dissect(write(tmp_path / "srv.pcapng", _server_sends(4), fin=False))
    assert [(d.outcome, d.at_end, d.sender) for d in r.deliveries] == [
        ("unsettled", True, "server")] * 4
    assert all(d.settled_time is None and d.latency is None for d in r.deliveries)
    ls = r.dissector.conns[0].links[0]
    assert ls.outcomes == {"unsettled": 4} and not ls.latencies


def test_client_sent_deliveries_open_at_the_capture_end_have_no_latency(tmp_path: Path) -> None:
    r = dissect(write(tmp_path / "cli.pcapng", _client_sends(4, 2), fin=False))
    assert [d.outcome for d in r.deliveries] == ["accepted"] * 2 + ["unsettled"] * 2
    assert [d.latency is None for d in r.deliveries] == [False, False, True, True]
    ls = r.dissector.conns[0].links[0]
    assert len(ls.latencies) == 2


def test_a_connection_that_ends_without_close_abandons_them(tmp_path: Path) -> None:
    # FIN without a close: the transport ended for real, the outcome is in doubt
    r = dissect(write(tmp_path / "fin.pcapng", _server_sends(2), fin=True))
    assert [(d.outcome, d.at_end) for d in r.deliveries] == [("abandoned", False)] * 2
    assert all(d.settled_time is None and d.latency is None for d in r.deliveries)
    assert r.dissector.conns[0].links[0].latencies.tolist() == []
