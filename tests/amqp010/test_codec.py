"""Encode and decode of every 0-10 control, command and struct, and of the wire types."""

from __future__ import annotations

import uuid

import pytest

from amqpcli.amqp010 import (
    COMMANDS,
    CONTROLS,
    STRUCTS,
    Array,
    Command,
    Control,
    DecodeError,
    EncodeError,
    SequenceSet,
    Struct,
    TypedInt,
    decode_method,
    decode_stream,
    decode_value,
    encode_assembly,
    encode_method,
    encode_value,
)
from amqpcli.amqp010.codec import decode_header, encode_header
from amqpcli.amqp010.frames import PROTOCOL_HEADER, Assembly
from tests.amqp010.samples import sample_map, sample_method, sample_struct

ALL_METHODS = sorted([*CONTROLS.values(), *COMMANDS.values()], key=lambda m: m.qname)
HEADER_STRUCTS = [s for s in STRUCTS.values() if s.type_code is not None]


def _roundtrip_method(m: Control | Command) -> None:
    raw = encode_method(m)
    back, end = decode_method(raw, 0, len(raw), isinstance(m, Command))
    assert end == len(raw)
    assert back == m
    assert list(back.fields) == [f.name for f in m.definition.fields if f.name in m.fields]
    assert encode_method(back) == raw


@pytest.mark.parametrize("md", ALL_METHODS, ids=lambda m: m.qname)
def test_every_control_and_command_round_trips(md) -> None:
    for k in range(3):
        _roundtrip_method(sample_method(md, k))  # every field present
        _roundtrip_method(sample_method(md, k, mask=0))  # none
        _roundtrip_method(sample_method(md, k, mask=0b0101_0101_0101_0101))  # every other


@pytest.mark.parametrize("sd", sorted(STRUCTS.values(), key=lambda s: s.qname),
                         ids=lambda s: s.qname)
def test_every_struct_round_trips(sd) -> None:
    for k in range(2):
        s = sample_struct(sd, k)
        raw = encode_value(sd.qname, s)
        back, end = decode_value(sd.qname, raw)
        assert (back, end) == (s, len(raw))
        if sd.type_code is not None:  # and as a struct32 in a header segment
            hdr = encode_header([s])
            assert decode_header(hdr, 0, len(hdr))[0] == (s,)


def test_every_method_as_a_frame_stream() -> None:
    """One stream holding every control and command (commands with a header of every
    codeable struct and a body), split into small frames, decodes back in order."""
    sent: list[tuple[int, Control | Command, tuple[Struct, ...], bytes | None]] = []
    stream = bytearray(PROTOCOL_HEADER)
    for i, md in enumerate(ALL_METHODS):
        m = sample_method(md, i)
        channel = i % 5
        header: tuple[Struct, ...] = ()
        body = None
        if isinstance(m, Command) and i % 2:
            header = tuple(sample_struct(HEADER_STRUCTS[(i + j) % len(HEADER_STRUCTS)], i)
                           for j in range(2))
            body = bytes(range(256)) * (i % 4)
        sent.append((channel, m, header, body))
        stream += encode_assembly(m, channel, header, body, max_frame_size=40 + i)
    items = decode_stream(stream)
    assert items[0].raw == PROTOCOL_HEADER
    got = [(a.channel, a.method, a.header, a.body) for a in items[1:]]
    assert got == sent
    assert all(isinstance(a, Assembly) and a.frames >= 1 for a in items[1:])


def test_interleaved_channels_and_tracks_reassemble() -> None:
    """Frames of different channels and tracks may interleave; segments are assembled per
    (channel, track)."""
    a = Command.make("message.transfer", destination="a", sync=True)
    b = Control.make("session.completed", commands=SequenceSet.of(1, 2))
    fa = encode_assembly(a, 1, (Struct.make("message.message-properties", content_type="t"),),
                         b"x" * 100, max_frame_size=20)
    fb = encode_assembly(b, 1, max_frame_size=20)
    fc = encode_assembly(a, 2, (), b"y" * 50, max_frame_size=20)
    frames = []
    for blob in (fa, fb, fc):
        out, pos = [], 0
        while pos < len(blob):
            size = int.from_bytes(blob[pos + 2:pos + 4], "big")
            out.append(blob[pos:pos + size])
            pos += size
        frames.append(out)
    mixed = bytearray()
    for i in range(max(map(len, frames))):
        for fs in frames:
            if i < len(fs):
                mixed += fs[i]
    items = decode_stream(mixed, expect_header=False)
    assert sorted((x.channel, x.method.qname, x.body) for x in items) == [
        (1, "message.transfer", b"x" * 100), (1, "session.completed", None),
        (2, "message.transfer", b"y" * 50)]


def test_transfer_bytes_match_the_wire() -> None:
    """Bytes as qpid-python wrote them in the echo capture (checked by tshark)."""
    m = Command.make("message.transfer", destination="echo", sync=True)
    assert encode_method(m).hex() == "04010101" "0100" "04" + b"echo".hex()
    dp = Struct.make("message.delivery-properties", priority=4, routing_key="echo")
    # struct32: size 10, code 0x0401, packing flags 0x08 0x02 (bits 3 and 9), fields
    assert encode_header([dp]).hex() == "0000000a" "0401" "0802" "04" "04" + b"echo".hex()


def test_packing_flag_widths_and_bits() -> None:
    # session.header: 1-octet size, 1-octet flags, a bit takes no octet
    assert encode_value("session.header", Struct.make("session.header", sync=True)) == b"\x01\x01"
    assert encode_value("session.header", Struct.make("session.header")) == b"\x01\x00"
    # queue.declare: bits passive..auto-delete only set flags
    q = Command.make("queue.declare", queue="q", durable=True, auto_delete=True)
    raw = encode_method(q)
    assert raw[4:6] == bytes([0b0010_1001, 0])  # queue (0), durable (3), auto-delete (5)
    assert raw[6:] == b"\x01q"
    # command-fragment: no size, no packing flags, every field present
    cf = Struct.make("session.command-fragment", command_id=7, byte_ranges=((0, 9),))
    assert encode_value("session.command-fragment", cf) == (
        b"\x00\x00\x00\x07" + b"\x00\x10" + (0).to_bytes(8, "big") + (9).to_bytes(8, "big"))
    # reply-to inside message-properties: 2-octet size, 2-octet flags, no code
    rt = Struct.make("message.reply-to", exchange="x", routing_key="k")
    assert encode_value("message.reply-to", rt) == b"\x00\x06\x03\x00\x01x\x01k"


def test_xid_has_the_errata_wire_form() -> None:
    xid = Struct.make("dtx.xid", format=1, global_id=b"g", branch_id=b"b")
    raw = encode_value("dtx.xid", xid)
    # 4-octet size, type code 0x0604, 2 octets of flags, uint32, vbin8, vbin8
    assert raw == b"\x00\x00\x00\x0c\x06\x04\x07\x00\x00\x00\x00\x01\x01g\x01b"
    start = Command.make("dtx.start", xid=xid, join=True)
    _roundtrip_method(start)


def test_typed_values_in_maps_round_trip_exactly() -> None:
    m = sample_map(3)
    raw = encode_value("map", m)
    back, end = decode_value("map", raw)
    assert end == len(raw) and back == m
    assert encode_value("map", back) == raw
    assert [getattr(v, "code", None) for v in back.values()][:3] == [None, 0x01, 0x02]


def test_plain_python_values_pick_default_codes() -> None:
    raw = encode_value("map", {"s": "x", "i": 5, "b": b"y", "t": True, "n": None,
                               "u": uuid.UUID(int=1), "f": 0.5, "l": [1], "d": {}})
    back, _ = decode_value("map", raw)
    assert {k: getattr(v, "code", None) for k, v in back.items()} == {
        "s": 0x95, "i": 0x31, "b": 0xA0, "t": None, "n": None, "u": None, "f": 0x33,
        "l": None, "d": None}
    assert back == {"s": "x", "i": 5, "b": b"y", "t": True, "n": None, "u": uuid.UUID(int=1),
                    "f": 0.5, "l": [1], "d": {}}


def test_str16_array_and_sequence_sets() -> None:
    raw = encode_value("array", Array(["ANONYMOUS"], 0x95))
    assert raw.hex() == "00000010" "95" "00000001" "0009" + b"ANONYMOUS".hex()
    ss = SequenceSet(((0, 4), (10, 10)))
    raw = encode_value("sequence-set", ss)
    assert raw == b"\x00\x10" + bytes.fromhex("00000000000000040000000a0000000a")
    back, _ = decode_value("sequence-set", raw)
    assert back == ss and 3 in back and 10 in back and 5 not in back
    wrap = SequenceSet(((0xFFFFFFFE, 1),))
    assert list(wrap.ids()) == [0xFFFFFFFE, 0xFFFFFFFF, 0, 1] and 0 in wrap and 2 not in wrap


def test_datetime_and_uuid_fields() -> None:
    mp = Struct.make("message.message-properties", message_id=uuid.UUID(int=5))
    dp = Struct.make("message.delivery-properties", timestamp=1_700_000_000)
    for s in (mp, dp):
        raw = encode_header([s])
        assert decode_header(raw, 0, len(raw))[0] == (s,)
    assert decode_header(encode_header([dp]), 0, 99)[0][0]["timestamp"] == 1_700_000_000


@pytest.mark.parametrize("bad", [
    ("uint8", 256), ("str8", "x" * 256), ("vbin16", b"x" * 70000), ("sequence-no", -1)])
def test_encode_rejects_values_that_do_not_fit(bad) -> None:
    with pytest.raises(EncodeError):
        encode_value(*bad)


@pytest.mark.parametrize(("raw", "offset", "expected"), [
    (b"\x01", 0, "2 octet(s) of class and method codes"),  # truncated
    (b"\x09\x09\x00\x00", 0, "a known control"),
    (b"\x01\x05\x00\x10", 2, "packing flags for 4 field(s)"),  # flag beyond the fields
    (b"\x01\x05\x01\x00\x01", 4, "2 octet(s) of uint16"),
    (b"\x01\x0c\x00\x00\x00", 4, "end of connection.close-ok"),
])
def test_decode_errors_have_offsets(raw: bytes, offset: int, expected: str) -> None:
    with pytest.raises(DecodeError) as e:
        decode_method(raw, 0, len(raw), False)
    assert (e.value.offset, e.value.expected) == (offset, expected)


def test_sized_values_never_read_past_their_bound() -> None:
    with pytest.raises(DecodeError) as e:
        decode_value("map", b"\xff\xff\xff\xff\x00")
    assert e.value.offset == 4 and "map" in e.value.expected
    with pytest.raises(DecodeError) as e:  # a count larger than the room left
        decode_value("array", b"\x00\x00\x00\x05\x21\xff\xff\xff\xff")
    assert "array elements" in e.value.expected
    with pytest.raises(DecodeError):  # reserved type code
        decode_value("list", b"\x00\x00\x00\x05\x00\x00\x00\x01\xb0")


def test_typed_int_keeps_its_code() -> None:
    v = TypedInt(7, 0x02)
    assert encode_value("list", [v]) == b"\x00\x00\x00\x06\x00\x00\x00\x01\x02\x07"


def test_renderer_view_keeps_spec_order_and_names() -> None:
    dp = Struct.make("message.delivery-properties", routing_key="k", priority=4, ttl=0,
                     redelivered=False)
    assert list(dp.fields) == ["priority", "ttl", "routing-key"]  # spec order, false bit absent
    assert dp.choice("priority") == "medium" and dp.choice("routing-key") is None
    cmd = Command.make("execution.result", command_id=3, value=dp, sync=True)
    assert cmd.as_dict() == {
        "class": "execution", "name": "result", "kind": "command", "sync": True,
        "fields": {"command-id": 3, "value": {
            "class": "message", "name": "delivery-properties", "kind": "struct",
            "fields": {"priority": 4, "ttl": 0, "routing-key": "k"}}}}
    with pytest.raises(KeyError):
        Struct.make("message.delivery-properties", colour="red")
