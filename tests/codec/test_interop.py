"""Proton's interop vectors: decode to exactly the listed values and AMQP types, re-encode
to the same bytes (README of ../shared/testdata/qpid-proton)."""

from __future__ import annotations

from typing import Any

import pytest

from amqpcli.codec import (
    Array,
    Described,
    Float,
    Int,
    Long,
    Short,
    Symbol,
    UByte,
    UInt,
    ULong,
    UShort,
    decode,
    decode_all,
    encode,
)
from amqpcli.codec.composites import AmqpValue, Header, Properties
from amqpcli.codec.message import Message
from tests.paths import PROTON_VECTORS_DIR, require

INTEROP = PROTON_VECTORS_DIR / "interop"


def vector(name: str) -> bytes:
    return require(INTEROP / f"{name}.amqp").read_bytes()


def same(a: Any, b: Any) -> bool:
    """Equal values of the same Python types, all the way down."""
    if type(a) is not type(b):
        return False
    if isinstance(a, Array):
        return (
            a.type == b.type
            and same(a.descriptor, b.descriptor)
            and len(a) == len(b)
            and all(same(x, y) for x, y in zip(a, b, strict=True))
        )
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        if len(a) != len(b):
            return False
        keys_b = {k: k for k in b}
        return all(k in keys_b and same(k, keys_b[k]) and same(v, b[k]) for k, v in a.items())
    if isinstance(a, Described):
        return same(a.descriptor, b.descriptor) and same(a.value, b.value)
    return bool(a == b)


EXPECTED: dict[str, list[Any]] = {
    "null": [None],
    "primitives": [
        True,
        False,
        UByte(42),
        UShort(42),
        Short(-42),
        UInt(12345),
        Int(-12345),
        ULong(12345),
        Long(-12345),
        Float(0.125),
        0.125,
    ],
    "strings": [b"abc\0defg", "abcdefg", Symbol("abcdefg"), b"", "", Symbol("")],
    "described": [
        Described(Symbol("foo-descriptor"), "foo-value"),
        Described(Int(12), Int(13)),
    ],
    "described_array": [
        Array([Int(i) for i in range(10)], "int", descriptor=Symbol("int-array")),
    ],
    "arrays": [
        Array([Int(i) for i in range(100)], "int"),
        Array(["a", "b", "c"], "string"),
        Array([], "int"),
    ],
    "lists": [[Int(32), "foo", True], []],
    "maps": [
        {"one": Int(1), "two": Int(2), "three": Int(3)},
        {Int(1): "one", Int(2): "two", Int(3): "three"},
        {},
    ],
}


def plain(v: Any) -> Any:
    """AmqpList/AmqpMap back to list/dict for a type-exact comparison with EXPECTED."""
    if isinstance(v, Array):
        return Array([plain(x) for x in v], v.type, descriptor=v.descriptor)
    if isinstance(v, list):
        return [plain(x) for x in v]
    if isinstance(v, dict):
        return {plain(k): plain(x) for k, x in v.items()}
    return v


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_vector_values_and_types(name: str) -> None:
    got = [plain(v) for v in decode_all(vector(name))]
    want = EXPECTED[name]
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert same(g, w), f"{name}: {g!r} != {w!r}"


@pytest.mark.parametrize("name", [*sorted(EXPECTED), "message"])
def test_vector_reencodes_to_same_bytes(name: str) -> None:
    data = vector(name)
    assert b"".join(encode(v) for v in decode_all(data)) == data


def test_maps_keep_key_order_and_types() -> None:
    maps = decode_all(vector("maps"))
    assert list(maps[0]) == ["three", "two", "one"]  # as encoded
    assert all(type(k) is str for k in maps[0])
    assert all(type(k) is Int for k in maps[1])


def test_array_element_constructor_kept() -> None:
    arrays = decode_all(vector("arrays"))
    assert [a.code for a in arrays] == [0x71, 0xB1, 0x71]
    described = decode(vector("described_array"))[0]
    assert described.code == 0x71 and described.descriptor == Symbol("int-array")


def test_message_vector() -> None:
    data = vector("message")
    m = Message.decode(data)
    assert isinstance(m.header, Header)
    assert m.header.durable is False and m.header.priority == UByte(4)
    assert isinstance(m.properties, Properties)
    assert isinstance(m.body, AmqpValue)
    # proton wrote the amqp-value as a binary holding the encoded string "hello"
    assert type(m.body.value) is bytes
    assert decode(m.body.value)[0] == "hello"
    assert m.encode() == data
    assert m.bare_bytes == data[data.index(b"\x00\x53\x73") :]
