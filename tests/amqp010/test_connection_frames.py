"""`ConnectionObserver`: an assembly's `frame` is its last frame's number on the wire,
frames of both sides counted in the order they came."""

from __future__ import annotations

from amqpcli.amqp010 import (
    PROTOCOL_HEADER,
    Command,
    ConnectionObserver,
    Control,
    StreamDecoder,
    encode_assembly,
)
from tests.amqp010.samples import frames_of as _frames


def test_frames_between_an_assemblys_first_and_last_frame_count() -> None:
    transfer = _frames(encode_assembly(Command.make("message.transfer", destination="d"), 1,
                                       (), b"x" * 40, max_frame_size=32))
    ping = encode_assembly(Control.make("connection.heartbeat"), 0)
    conn = ConnectionObserver()
    got = []
    for side, data in [("client", PROTOCOL_HEADER), ("server", PROTOCOL_HEADER),
                       ("client", transfer[0]), ("server", ping + ping),
                       ("client", b"".join(transfer[1:]) + ping)]:
        got += [(o.item.method.qname, o.frame) for o in conn.feed(side, data, 0.0)
                if o.frame]
    # heartbeats 2 and 3 (server), the transfer's frames 1, 4, 5, then a heartbeat 6
    assert got == [("connection.heartbeat", 2), ("connection.heartbeat", 3),
                   ("message.transfer", 5), ("connection.heartbeat", 6)]
    assert conn.wire_frames == 6


def test_an_assembly_knows_its_last_frame_in_its_direction() -> None:
    a = _frames(encode_assembly(Command.make("message.transfer", destination="a"), 1,
                                (), b"x" * 40, max_frame_size=32))
    b = encode_assembly(Command.make("message.transfer", destination="b"), 2)
    dec = StreamDecoder(expect_header=False)
    items = dec.feed(a[0] + b + b"".join(a[1:]))
    assert [(i.channel, i.last_frame) for i in items] == [(2, 2), (1, 4)]  # type: ignore[union-attr]
    assert dec.frames_read == 4


def test_a_message_has_its_first_frames_time() -> None:
    transfer = _frames(encode_assembly(Command.make("message.transfer", destination="d"), 1,
                                       (), b"x" * 40, max_frame_size=32))
    conn = ConnectionObserver()
    conn.feed("client", PROTOCOL_HEADER + transfer[0], 1.0)
    (o,) = conn.feed("client", b"".join(transfer[1:]), 2.0)
    assert o.time == 2.0 and o.item.first_time == 1.0  # type: ignore[union-attr]
    (m,) = conn.model.messages
    assert m.time == 1.0 and m.timeline[0].time == 1.0
    # without times given to the decoder, the time the model was fed
    dec = StreamDecoder(expect_header=False)
    (asm,) = dec.feed(b"".join(transfer))
    assert asm.first_time is None  # type: ignore[union-attr]
