"""Malformed input: a DecodeError with offset/expected/found, never another exception,
never a large allocation or a long loop."""

from __future__ import annotations

import struct

import pytest

from amqpcli.codec import DecodeError, EncodeError, UByte, UInt, decode, decode_all, encode, skip
from amqpcli.codec.decode import MAX_DEPTH
from amqpcli.codec.message import Message


def err(data: bytes) -> DecodeError:
    with pytest.raises(DecodeError) as info:
        decode_all(data)
    return info.value


def test_error_fields_and_one_line() -> None:
    e = err(b"\xa1\x05ab")
    assert e.offset == 0 and "string" in e.expected and "end of input" in e.found
    assert str(e) == f"at offset {e.offset}: expected {e.expected}, found {e.found}"
    assert "\n" not in str(e)
    assert isinstance(e, ValueError)


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"\x52",
        b"\x70\x00\x00",
        b"\x80" + b"\x00" * 7,
        b"\x98" + b"\x00" * 15,
        b"\x94" + b"\x00" * 3,
        b"\xa0",
        b"\xb1\x00\x00\x01",
        b"\xc0\x05\x02\x41",
        b"\x00\x53",
        b"\x00",
        b"\xe0\x03\x02\x54",
    ],
)
def test_truncated(data: bytes) -> None:
    with pytest.raises(DecodeError):
        decode(data)


@pytest.mark.parametrize("code", [0x01, 0x3F, 0x46, 0x57, 0x99, 0xFF])
def test_unknown_format_code(code: int) -> None:
    e = err(bytes([code]))
    assert e.offset == 0 and e.found == f"0x{code:02x}"


def test_unknown_code_is_reported_where_it_is() -> None:
    e = err(b"\xc0\x03\x02\x41\xff")
    assert e.offset == 4


@pytest.mark.parametrize(
    "data",
    [
        b"\xb0\xff\xff\xff\xff",  # 4 GiB binary
        b"\xb1\xff\xff\xff\xf0abc",
        b"\xd0\xff\xff\xff\xff\xff\xff\xff\xff",  # list32 of 4G items
        b"\xd1\xff\xff\xff\xff\xff\xff\xff\xfe",
        b"\xf0\xff\xff\xff\xff\xff\xff\xff\xff\x71",
        b"\xf0\x00\x00\x00\x05\xff\xff\xff\xff\x40",  # 4G nulls in five bytes
        b"\xf0\x00\x00\x00\x05\xff\xff\xff\xff\x41",
        b"\xd0\x00\x00\x00\x08\xff\xff\xff\xff\x40\x40\x40\x40",  # count > size
        b"\xe0\x02\xff\x43",
    ],
)
def test_huge_declared_sizes_fail_fast(data: bytes) -> None:
    with pytest.raises(DecodeError):
        decode(data)


def test_zero_width_array_within_input_bound_decodes() -> None:
    v = decode(b"\xe0\x02\x03\x40")[0]
    assert list(v) == [None, None, None]


def test_deep_nesting_is_a_decode_error_not_recursion_error() -> None:
    depth = 5000
    data = b"\xc0\x01\x01" * 0  # built inside out below
    data = b"\x45"
    for _ in range(depth):
        data = b"\xd0" + struct.pack(">II", len(data) + 4, 1) + data
    e = err(data)
    assert "nesting" in e.expected
    ok = b"\x45"
    for _ in range(MAX_DEPTH - 1):
        ok = b"\xd0" + struct.pack(">II", len(ok) + 4, 1) + ok
    decode(ok)


def test_deep_described_nesting() -> None:
    e = err(b"\x00" * 10000 + b"\x40")
    assert e.offset >= 0


def test_size_mismatch() -> None:
    # list8 says 3 bytes but holds a 2-byte item and a 1-byte item = count 2 in 4 bytes
    e = err(b"\xc0\x03\x02\x52\x01\x41")
    assert "ending" in e.expected


def test_bad_boolean_and_char_and_utf8() -> None:
    assert "boolean" in err(b"\x56\x02").expected
    assert "Unicode scalar value" in err(b"\x73\x00\x11\x00\x00").expected
    assert "UTF-8" in err(b"\xa1\x02\xc3\x28").expected


def test_odd_map_count() -> None:
    assert "even" in err(b"\xc1\x02\x01\x40").expected


def test_skip_checks_bounds() -> None:
    assert skip(b"\xa1\x01a\x40") == 3
    with pytest.raises(DecodeError):
        skip(b"\xb0\x00\x00\x00\x09abc")


@pytest.mark.parametrize(
    "data", [b"\x00", b"\x00\x53", b"\x00\x53\x70", b"\x00\x80\x00", b"\x00\xa3\x05ab"]
)
def test_truncated_message(data: bytes) -> None:
    with pytest.raises(DecodeError):
        Message.decode(data)


def test_message_errors() -> None:
    with pytest.raises(DecodeError, match="section"):
        Message.decode(b"\x41")
    with pytest.raises(DecodeError, match="section"):
        Message.decode(b"\x00\x53\x99\x45")  # unknown section
    props = b"\x00\x53\x73\x45"
    header = b"\x00\x53\x70\x45"
    with pytest.raises(DecodeError, match="order"):
        Message.decode(props + header)
    with pytest.raises(DecodeError, match="order"):
        Message.decode(header + header)
    value = b"\x00\x53\x77\x41"
    data = b"\x00\x53\x75\xa0\x00"
    with pytest.raises(DecodeError, match="amqp-value"):
        Message.decode(value + value)
    with pytest.raises(DecodeError, match="amqp-value"):
        Message.decode(data + value)
    with pytest.raises(DecodeError, match="header section value"):
        Message.decode(b"\x00\x53\x70\xa0\x00")


def test_encode_errors() -> None:
    with pytest.raises(EncodeError):
        encode(UByte(256))
    with pytest.raises(EncodeError):
        encode(UInt(-1))
    with pytest.raises(EncodeError):
        encode(2**63)
    with pytest.raises(EncodeError):
        encode(object())
    with pytest.raises(EncodeError):
        encode({"a", "b"})


def test_a_frame_body_that_is_no_performative_names_its_type_once() -> None:
    from amqpcli.codec.frames import FrameReader

    # a frame whose body is a described value with an unknown descriptor (0xee)
    body = bytes.fromhex("0053ee45")  # descriptor ulong 0xee, an empty list
    frame = struct.pack(">IBBH", 8 + len(body), 2, 0, 0) + body
    (err,) = FrameReader().feed(b"AMQP\x00\x01\x00\x00" + frame)[1:]
    text = str(err)
    assert "found a described value (descriptor 0xee) holding a list of 0 items" in text, text


@pytest.mark.parametrize(("body", "found"), [
    ("c0020140", "found a list of 1 item"),  # not "list [None]"
    ("5201", "found uint 1"),  # not "UInt(1)"
    ("4101", "found boolean true"),
    ("0053eea10178", "holding string 'x'"),
    ("00a30178c10100", "(descriptor 'x') holding a map of 0 entries"),
])
def test_a_frame_body_that_is_no_performative_is_told_in_amqp_terms(body: str,
                                                                   found: str) -> None:
    from amqpcli.codec.frames import FrameReader

    b = bytes.fromhex(body)
    frame = struct.pack(">IBBH", 8 + len(b), 2, 0, 0) + b
    (err,) = FrameReader().feed(b"AMQP\x00\x01\x00\x00" + frame)[1:]
    assert found in str(err), str(err)
    for name in ("Described", "UInt", "AmqpList", "Symbol", "None]"):
        assert name not in str(err), str(err)


def test_a_sasl_frame_body_that_is_none_says_only_its_kind() -> None:
    from amqpcli.codec.frames import FrameReader

    b = bytes.fromhex("00534fc0020140")  # an unknown descriptor: may be a damaged sasl-init
    frame = struct.pack(">IBBH", 8 + len(b), 2, 1, 0) + b
    (err,) = FrameReader().feed(b"AMQP\x03\x01\x00\x00" + frame)[1:]
    assert str(err).endswith("expected a SASL frame body, found a described value"), str(err)


def test_a_frame_size_past_a_sanity_limit_is_not_called_max_frame_size() -> None:
    from amqpcli.codec.frames import FrameReader

    wire = b"AMQP\x00\x01\x00\x00" + struct.pack(">IBBH", 0x7FFF, 2, 0, 0) + b"x" * 8
    negotiated = str(FrameReader(512).feed(wire)[1])
    sanity = str(FrameReader(512, sanity=True).feed(wire)[1])
    assert "at most 512 (max-frame-size)" in negotiated
    assert "at most 512 (a sanity limit" in sanity and "max-frame-size" not in sanity
