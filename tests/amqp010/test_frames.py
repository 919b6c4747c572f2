"""Frame reader and assembler: protocol header, frame header checks, partial input,
errors with offsets."""

from __future__ import annotations

import pytest

from amqpcli.amqp010 import (
    PROTOCOL_HEADER,
    Assembler,
    Command,
    Control,
    DecodeError,
    Frame,
    FrameError,
    FrameReader,
    ProtocolHeader,
    StreamDecoder,
    StreamError,
    encode_assembly,
    encode_frames,
    is_protocol_header,
)
from amqpcli.amqp010.codec import decode_fields, encode_fields
from amqpcli.amqp010.model import FieldDef

CLOSE_OK = encode_assembly(Control.make("connection.close-ok"))


def test_protocol_header_recognised() -> None:
    assert is_protocol_header(b"AMQP\x01\x01\x00\x0a" + CLOSE_OK)
    assert not is_protocol_header(b"AMQP\x00\x01\x00\x00")  # AMQP 1.0
    assert not is_protocol_header(b"AMQP\x00\x00\x09\x01")  # 0-9-1


def test_byte_by_byte_feeding() -> None:
    data = PROTOCOL_HEADER + CLOSE_OK + CLOSE_OK
    r = FrameReader()
    items = [x for b in data for x in r.feed(bytes([b]))] + r.close()
    assert isinstance(items[0], ProtocolHeader) and items[0].version == (0, 10)
    assert [(type(x).__name__, x.offset) for x in items[1:]] == [("Frame", 8), ("Frame", 24)]
    frame = items[1]
    assert isinstance(frame, Frame)
    assert (frame.flags, frame.type, frame.size, frame.track, frame.channel) == (15, 0, 16, 0, 0)
    assert frame.first_segment and frame.last_segment and frame.first_frame and frame.last_frame


@pytest.mark.parametrize(("data", "offset", "expected"), [
    (b"AMQP\x00\x01\x00\x00", 0, "protocol header AMQP 1 1 0 10"),
    (b"HTTP", 0, "protocol header AMQP 1 1 0 10"),
    (PROTOCOL_HEADER + b"\x4f" + CLOSE_OK[1:], 8, "frame format 0 and reserved bits 0"),
    (PROTOCOL_HEADER + CLOSE_OK[:1] + b"\x07" + CLOSE_OK[2:], 9, "segment type 0-3"),
    (PROTOCOL_HEADER + CLOSE_OK[:2] + b"\x00\x0b" + CLOSE_OK[4:], 10, "frame size >= 12"),
    (PROTOCOL_HEADER + CLOSE_OK[:5] + b"\x02" + CLOSE_OK[6:], 13, "track 0 or 1"),
    (PROTOCOL_HEADER + CLOSE_OK[:4] + b"\x01" + CLOSE_OK[5:], 12, "reserved octet 4 zero"),
    (PROTOCOL_HEADER + CLOSE_OK[:5] + b"\x11" + CLOSE_OK[6:], 13,
     "reserved bits of octet 5 zero"),
    (PROTOCOL_HEADER + CLOSE_OK[:11] + b"\x01" + CLOSE_OK[12:], 16,
     "reserved octets 8-11 zero"),
    (PROTOCOL_HEADER + CLOSE_OK[:-1], 8, "a complete frame"),
])
def test_frame_errors_have_offsets(data: bytes, offset: int, expected: str) -> None:
    r = FrameReader()
    items = r.feed(data) + r.close()
    err = items[-1]
    assert isinstance(err, FrameError)
    assert (err.offset, err.error.expected) == (offset, expected)
    assert r.feed(CLOSE_OK) == [] and r.close() == []  # nothing after an error


def test_reserved_bits_of_the_track_octet_are_named() -> None:
    r = FrameReader()
    err = r.feed(PROTOCOL_HEADER + CLOSE_OK[:5] + b"\x11" + CLOSE_OK[6:])[-1]
    assert isinstance(err, FrameError)
    assert err.error.found == "0x11 (track 1, reserved bits 0x10 set)"


def test_mid_stream_start_without_header() -> None:
    r = FrameReader(expect_header=False)
    assert [type(x).__name__ for x in r.feed(CLOSE_OK)] == ["Frame"]


def test_assembler_rejects_out_of_order_frames() -> None:
    cmd = Command.make("message.transfer", destination="d")
    blob = encode_assembly(cmd, 1, (), b"x" * 40, max_frame_size=20)
    frames = [x for x in FrameReader(expect_header=False).feed(blob)]
    a = Assembler()
    with pytest.raises(DecodeError) as e:
        a.push(frames[1])  # a continuation with nothing open
    assert e.value.expected == "the first frame of an assembly"
    header_first = encode_frames(2, b"", 1, 1, True, True)
    with pytest.raises(DecodeError) as e:
        Assembler().push(FrameReader(expect_header=False).feed(header_first)[0])
    assert e.value.expected == "a control or command segment first"


def test_control_segment_on_command_track_is_an_error() -> None:
    payload = bytes(CLOSE_OK[12:])
    bad = encode_frames(0, payload, 0, 1, True, True)
    items = StreamDecoder(expect_header=False).feed(bad)
    assert isinstance(items[0], StreamError) and items[0].error.expected == "track control"


def test_four_octet_packing_flags() -> None:
    """No 0-10 struct uses pack 4, but the rule is the same: octet i holds fields 8i..8i+7."""
    defs = tuple(FieldDef(f"f{i}", "uint8", "uint8", False, None, i) for i in range(27))
    out = bytearray()
    encode_fields(out, defs, 4, {"f0": 1, "f9": 2, "f26": 3})
    assert bytes(out[:4]) == bytes([0x01, 0x02, 0x00, 0x04])
    assert bytes(out[4:]) == b"\x01\x02\x03"
    fields, end = decode_fields(defs, 4, bytes(out), 0, len(out))
    assert fields == {"f0": 1, "f9": 2, "f26": 3} and end == len(out)


def test_connection_observer_keeps_sides_apart() -> None:
    from amqpcli.amqp010 import ConnectionObserver

    conn = ConnectionObserver()
    attach = encode_assembly(Control.make("session.attach", name=b"s"), 1)
    got = conn.feed("client", PROTOCOL_HEADER + attach, 1.0)
    assert [type(o.item).__name__ for o in got] == ["ProtocolHeader", "Assembly"]
    bad = conn.feed("server", b"AMQP\x00\x01\x00\x00", 2.0)  # a 1.0 header: not ours
    assert isinstance(bad[0].item, StreamError) and conn.errors["server"].offset == 0
    cp = encode_assembly(Control.make("session.command-point", command_id=5, command_offset=0), 1)
    transfer = encode_assembly(Command.make("message.transfer", destination="q"), 1)
    got = conn.feed("client", cp + transfer[:-1], 3.0)  # the client side goes on
    assert [o.item.method.qname for o in got] == ["session.command-point"]
    got = conn.feed("client", transfer[-1:], 4.0)
    assert got[0].events[0].command_id == 5
    assert conn.close(5.0) == []
    with pytest.raises(ValueError):
        conn.feed("middle", b"", 6.0)


def test_errors_in_multi_frame_segments_point_into_the_stream() -> None:
    """A segment spread over frames: the offset of a fault inside it counts the frame
    headers in between."""
    from amqpcli.amqp010 import Struct, encode_header

    mp = Struct.make("message.message-properties", content_type="x" * 40)
    header = bytearray(encode_header([mp]))
    header[4:6] = b"\x04\x09"  # an unknown struct code, at octet 4 of the segment
    cmd = encode_assembly(Command.make("message.transfer"), 1)
    cmd = bytes([cmd[0] & ~0x04]) + cmd[1:]  # not the last segment: a header follows
    seg = encode_frames(2, bytes(header), 1, 1, False, True, max_frame_size=12 + 3)
    stream = cmd + seg
    items = StreamDecoder(expect_header=False).feed(stream)
    err = items[-1]
    assert isinstance(err, StreamError) and err.error.expected == "a known struct type code"
    # segment octet 4 is in the second frame (payload octets 3..5), one octet in
    assert err.offset == len(cmd) + 15 + 12 + 1
    assert stream[err.offset:err.offset + 2] == b"\x04\x09"
