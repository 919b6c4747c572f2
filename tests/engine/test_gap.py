"""`Connection.on_gap`: bytes of one direction missing from a capture mark the deliveries
that direction was in the middle of sending, and only those."""

from __future__ import annotations

import copy

from amqpcli.codec import composites as c
from amqpcli.codec.frames import encode_frame, encode_protocol_header
from amqpcli.engine import DeliverySettled
from amqpcli.engine.observer import Observer

SENDER, RECEIVER = False, True


def _observer() -> Observer:
    """A client sending on link `out` (handle 0) and receiving on `in` (handle 1)."""
    o = Observer()
    t = 0.0
    c2s = [encode_protocol_header("amqp"), encode_frame(c.Open(container_id="c")),
           encode_frame(c.Begin(next_outgoing_id=0, incoming_window=100,
                                outgoing_window=100))]
    s2c = [encode_protocol_header("amqp"), encode_frame(c.Open(container_id="s")),
           encode_frame(c.Begin(remote_channel=0, next_outgoing_id=0, incoming_window=100,
                                outgoing_window=100))]
    for name, handle, role in (("out", 0, SENDER), ("in", 1, RECEIVER)):
        c2s.append(encode_frame(c.Attach(name=name, handle=handle, role=role,
                                         source=c.Source(), target=c.Target(),
                                         initial_delivery_count=0)))
        s2c.append(encode_frame(c.Attach(name=name, handle=handle, role=not role,
                                         source=c.Source(), target=c.Target(),
                                         initial_delivery_count=0)))
    s2c.append(encode_frame(c.Flow(next_incoming_id=0, incoming_window=100,
                                   next_outgoing_id=0, outgoing_window=100, handle=0,
                                   delivery_count=0, link_credit=10)))
    c2s.append(encode_frame(c.Flow(next_incoming_id=0, incoming_window=100,
                                   next_outgoing_id=0, outgoing_window=100, handle=1,
                                   delivery_count=0, link_credit=10)))
    for a, b in zip(c2s, s2c, strict=True):
        o.feed_bytes("client", a, t)
        o.feed_bytes("server", b, t)
    return o


def _transfer(handle: int, did: int | None, more: bool) -> bytes:
    return encode_frame(c.Transfer(handle=handle, delivery_id=did,
                                   delivery_tag=b"t" if did is not None else None,
                                   message_format=0 if did is not None else None, more=more),
                        0, b"x" * 100)


def test_a_gap_marks_what_that_side_was_sending() -> None:
    o = _observer()
    o.feed_bytes("client", _transfer(0, 0, True), 1.0)  # the client's delivery, begun
    o.feed_bytes("server", _transfer(1, 0, True), 1.0)  # the server's, begun
    o.connection.on_gap("client", 300, 1.5)
    assert o.connection.midstream
    ev = o.feed_bytes("client", _transfer(0, None, False), 2.0)
    ev += o.feed_bytes("server", _transfer(1, None, False), 2.0)
    ev += o.feed_bytes("server", encode_frame(c.Disposition(
        role=RECEIVER, first=0, settled=True, state=c.Accepted())), 3.0)
    ev += o.feed_bytes("client", encode_frame(c.Disposition(
        role=RECEIVER, first=0, settled=True, state=c.Accepted())), 3.0)
    mine, theirs = sorted((e.delivery for e in ev if isinstance(e, DeliverySettled)),
                          key=lambda d: d.sender)
    assert (mine.sender, theirs.sender) == ("client", "server")
    assert mine.incomplete and not theirs.incomplete
    assert [e.kind for e in mine.timeline] == ["transfer", "gap", "transfer", "disposition"]
    gap = mine.timeline[1]
    assert (gap.time, gap.side) == (1.5, "client") and "300 bytes" in gap.detail
    # what was seen stays: the outcome, the latency from the first transfer
    assert mine.outcome == "accepted" and mine.latency == 2.0 and mine.frames == 2
    assert copy.deepcopy(mine).incomplete


def test_no_delivery_in_progress_no_mark() -> None:
    o = _observer()
    o.feed_bytes("client", _transfer(0, 0, False), 1.0)
    o.connection.on_gap("client", 300, 1.5)
    ev = o.feed_bytes("server", encode_frame(c.Disposition(
        role=RECEIVER, first=0, settled=True, state=c.Accepted())), 2.0)
    (d,) = [e.delivery for e in ev if isinstance(e, DeliverySettled)]
    assert not d.incomplete and "gap" not in [e.kind for e in d.timeline]
