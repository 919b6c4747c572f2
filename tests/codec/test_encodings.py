"""Every format code of Part 1 decodes to the right value and Python type, including the
non-smallest encodings a peer may send; the smallest ones re-encode byte for byte."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from amqpcli.codec import (
    AmqpList,
    AmqpMap,
    Array,
    Byte,
    Char,
    Decimal32,
    Decimal64,
    Decimal128,
    Float,
    Int,
    Long,
    Short,
    Symbol,
    Timestamp,
    UByte,
    UInt,
    ULong,
    UShort,
    decode,
    encode,
)
from amqpcli.codec.composites import Attach, Source

from .helpers import same

U = uuid.UUID("00112233-4455-6677-8899-aabbccddeeff")

# (hex, value, canonical?) -- canonical: what encode() writes for the decoded value
CASES: list[tuple[str, Any, bool]] = [
    ("40", None, True),
    ("41", True, True),
    ("42", False, True),
    ("5601", True, False),
    ("5600", False, False),
    ("50ff", UByte(255), True),
    ("60ffff", UShort(65535), True),
    ("70000000ff", UInt(255), False),
    ("70ffffffff", UInt(2**32 - 1), True),
    ("5207", UInt(7), True),
    ("43", UInt(0), True),
    ("5200", UInt(0), False),
    ("800000000000000001", ULong(1), False),
    ("80ffffffffffffffff", ULong(2**64 - 1), True),
    ("5309", ULong(9), True),
    ("44", ULong(0), True),
    ("51ff", Byte(-1), True),
    ("61fffe", Short(-2), True),
    ("71fffffffd", Int(-3), False),
    ("7180000000", Int(-(2**31)), True),
    ("54fc", Int(-4), True),
    ("81fffffffffffffffb", Long(-5), False),
    ("818000000000000000", Long(-(2**63)), True),
    ("55fa", Long(-6), True),
    ("723fc00000", Float(1.5), True),
    ("82bff8000000000000", -1.5, True),
    ("7401020304", Decimal32(b"\x01\x02\x03\x04"), True),
    ("840102030405060708", Decimal64(bytes(range(1, 9))), True),
    ("94" + bytes(range(16)).hex(), Decimal128(bytes(range(16))), True),
    ("730001f600", Char("\U0001f600"), True),
    ("83ffffffffffffffff", Timestamp(-1), True),
    ("98" + U.hex, U, True),
    ("a0026869", b"hi", True),
    ("b0000000026869", b"hi", False),
    ("a102c3a9", "é", True),
    ("b100000002c3a9", "é", False),
    ("a3026869", Symbol("hi"), True),
    ("b3000000026869", Symbol("hi"), False),
    ("45", [], True),
    ("c00100", AmqpList([], 0xC0), True),  # kept as list8 (not the list0 it could be)
    ("c0030241 42", [True, False], True),
    ("d0000000060000000241 42", AmqpList([True, False], 0xD0), True),
    ("c10100", {}, True),
    ("c1050241 a10178", {True: "x"}, True),
    ("d1000000060000000241 42", AmqpMap({True: False}, 0xD1), True),
    ("e0040254 0102", Array([Int(1), Int(2)], "int"), True),
    ("f00000000d000000027100000001 00000002", Array([Int(1), Int(2)], "int"), True),
    ("e0020241", Array([True, True], "boolean"), True),
    ("e0040256 0100", Array([True, False], "boolean"), True),
    ("e00602a3 0161 0162", Array([Symbol("a"), Symbol("b")], "symbol"), True),
    (
        "e00a02e0 03015201 03015202",
        Array([Array([UInt(1)], "uint"), Array([UInt(2)], "uint")], "array"),
        True,
    ),
    ("e009020053 77a0 0161 0162", Array([b"a", b"b"], "binary", descriptor=ULong(0x77)), True),
]


def _hex(h: str) -> bytes:
    return bytes.fromhex(h.replace(" ", ""))


@pytest.mark.parametrize(("h", "value", "canonical"), CASES, ids=[c[0][:24] for c in CASES])
def test_format_code(h: str, value: Any, canonical: bool) -> None:
    data = _hex(h)
    got, end = decode(data)
    assert end == len(data)
    assert same(got, value), (got, value)
    if isinstance(value, AmqpList | AmqpMap):
        assert type(got) is type(value) and got.code == value.code
    if isinstance(value, list) and not isinstance(value, AmqpList | Array):
        assert type(got) is list
    out = encode(got)
    if canonical:
        assert out == data
    else:
        assert len(out) < len(data)
        assert same(decode(out)[0], value)


def test_restricted_field_types_resolve() -> None:
    a = Attach(name="n", handle=1, role=True, snd_settle_mode=1, rcv_settle_mode=0,
               source=Source(address="q", timeout=30, durable=2, expiry_policy="never"),
               initial_delivery_count=0, max_message_size=1024)  # fmt: skip
    got = decode(encode(a))[0]
    assert type(got.snd_settle_mode) is UByte and got.snd_settle_mode == 1
    assert type(got.rcv_settle_mode) is UByte
    assert got.role is True and type(got.handle) is UInt
    assert type(got.initial_delivery_count) is UInt
    assert type(got.max_message_size) is ULong and got.max_message_size == 1024
    assert type(got.source.timeout) is UInt and type(got.source.durable) is UInt
    assert type(got.source.expiry_policy) is Symbol
    assert type(got.source.address) is str  # address is '*': a str stays a string
