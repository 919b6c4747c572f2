"""`--trace` (send, recv, browse, serve) writes each frame in the format of `amqp
pcap-dump`: the last frame of a delivery sent in several transfers shows the whole
message (`… bytes in all`), not that piece alone (`(5 bytes)`), and a transfer whose
payload is no valid message says why. A stream's close lets go of what it held."""

from __future__ import annotations

import io

from amqpcli.cli.trace import frame_tracer
from amqpcli.codec import composites as c
from amqpcli.codec.frames import FrameReader, encode_frame
from amqpcli.codec.message import Message

BODY = b"0123456789" * 30
NOT_A_MESSAGE = b"\x00\x53\x75\xa0\x09short"  # a data section that claims 9 bytes, has 5


def _pieces(delivery_id: int) -> list[bytes]:
    payload = Message(body=BODY).encode()
    return [encode_frame(c.Transfer(handle=0, delivery_id=delivery_id, delivery_tag=b"t",
                                    message_format=0, more=True), 0, payload[:100]),
            encode_frame(c.Transfer(handle=0, more=True), 0, payload[100:-5]),
            encode_frame(c.Transfer(handle=0), 0, payload[-5:])]


def _traced(frames: list[tuple[str, bytes]]) -> list[str]:
    out = io.StringIO()
    trace = frame_tracer(lambda: out)
    reader = FrameReader()
    for arrow, data in frames:
        for item in reader.feed(data):
            trace("c1", arrow, item, 0.0)
    return out.getvalue().splitlines()


def test_the_last_piece_shows_the_whole_message() -> None:
    lines = _traced([("->", f) for f in _pieces(0)])
    assert len(lines) == 3
    assert "(100 bytes)" in lines[0] or "more" in lines[0]
    assert 'data b"0123456789' in lines[2], lines[2]
    assert f"({len(Message(body=BODY).encode())} bytes in all)" in lines[2], lines[2]


def test_a_payload_that_is_no_message_says_so() -> None:
    frame = encode_frame(c.Transfer(handle=0, delivery_id=0, delivery_tag=b"t",
                                    message_format=0), 0, NOT_A_MESSAGE)
    (line,) = _traced([("<-", frame)])
    assert "not a valid message" in line, line


def test_a_close_lets_go_of_a_delivery_under_way() -> None:
    """A delivery cut off by its connection's close is not joined to the next one that
    the same label's stream carries (`serve --trace` numbers connections afresh, but
    the tracer must hold nothing of a closed stream)."""
    first = _pieces(0)[:2]
    lines = _traced([("->", f) for f in first] + [("->", encode_frame(c.Close()))]
                    + [("->", f) for f in _pieces(0)])
    assert f"({len(Message(body=BODY).encode())} bytes in all)" in lines[-1], lines[-1]
